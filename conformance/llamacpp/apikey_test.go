package llamacpp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/engine/launch"
	"github.com/llmbench-org/llmbench/internal/testkit"
)

// TestAPIKeyGuardsMetrics: a real llama-server started with --api-key
// refuses /metrics without the key (it guards every route but /health and
// /models), and an llmbench run given the key (engine.api_key_env) reads
// its /metrics with it on every scrape, writing the key nowhere.
func TestAPIKeyGuardsMetrics(t *testing.T) {
	both(t)
	if server == "" {
		t.Skip("needs LLMBENCH_LLAMACPP_SERVER and LLMBENCH_LLAMACPP_MODEL to start a second llama-server with --api-key")
	}
	<-built
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	const key = "sk-conformance-7c1e0b"
	le, err := launch.New(launch.Config{
		Kind: launch.KindLlamaCpp,
		Command: []string{server, "-m", "{model}", "--host", "{host}", "--port", "{port}", "--metrics",
			"--alias", "tiny", "-c", fmt.Sprint(slotCtx), "-np", "1", "-t", "1", "--jinja", "--no-warmup", "--api-key", key},
		Model:   model,
		Ready:   startLimit,
		APIKey:  key,
		LogPath: filepath.Join(t.TempDir(), "llama-server.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := le.Start(context.Background())
	if err != nil {
		t.Fatalf("llama-server --api-key did not start: %v", err)
	}
	t.Cleanup(func() { stop(le.Stop) })
	root := rootOf(ep.BaseURL)

	resp, err := http.Get(root + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/metrics without the key: HTTP %d, want 401 (does --api-key still guard /metrics?)", resp.StatusCode)
	}

	pairs := make([]string, 0, lastByteToken-firstByteToken+1)
	for id := firstByteToken; id <= lastByteToken; id++ {
		pairs = append(pairs, fmt.Sprintf("[%d, false]", id))
	}
	scenario := testkit.WriteScenario(t, `name: llamacpp-api-key
engine:
  kind: external
  base_url: `+root+`/v1
  api_key_env: CONFORMANCE_KEY
workload:
  concurrency: 1
  requests: 4
  prompt_tokens: 16
  output_tokens: 8
request:
  extra_body: {logit_bias: [`+strings.Join(pairs, ", ")+`]}
scrape:
  interval: 300ms
`)
	out, raw, log := runCLI(t, scenario, "CONFORMANCE_KEY="+key)
	var s struct {
		Health struct {
			ScrapeOK       int `json:"scrape_ok"`
			ScrapeFailures int `json:"scrape_failures"`
		} `json:"health"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Health.ScrapeOK < 2 || s.Health.ScrapeFailures != 0 {
		t.Errorf("%d scrapes OK, %d failed: want every scrape of the guarded /metrics to read it\n%s", s.Health.ScrapeOK, s.Health.ScrapeFailures, log)
	}
	if bytes.Contains(log, []byte(key)) {
		t.Error("the run printed the API key")
	}
	_ = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(key)) {
			t.Errorf("%s holds the API key", path)
		}
		return nil
	})
}
