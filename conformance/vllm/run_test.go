package vllm

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/internal/testkit"
)

// TestLLMBenchRunConserves: an llmbench run against the real vLLM (engine
// kind external, the URL alone) finishes every request and its
// reconciliation finds the engine's finished-request and token counters
// moved by exactly what the client counted: request_conservation and
// token_conservation with a difference of 0.
func TestLLMBenchRunConserves(t *testing.T) {
	both(t)
	<-built
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	scenario := testkit.WriteScenario(t, `name: vllm-cpu-conformance
seed: 3
engine:
  kind: external
  base_url: `+real.root+`/v1
workload:
  concurrency: 3
  requests: 24
  prompt_tokens: {dist: uniform, min: 8, max: 48}
  output_tokens: {dist: uniform, min: 4, max: 32}
scrape:
  interval: 500ms
`)
	out := t.TempDir()
	cmd := exec.Command(llmbenchBin, "run", "--view", "plain", "--output-dir", out, scenario)
	cmd.WaitDelay = 10 * time.Second
	log, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("llmbench run: %v\n%s", err, log)
	}
	paths, _ := filepath.Glob(filepath.Join(out, "*", "summary.json"))
	if len(paths) != 1 {
		t.Fatalf("summary.json: %v\n%s", paths, log)
	}
	raw, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Findings []struct {
			ID       string             `json:"id"`
			Severity string             `json:"severity"`
			Verdict  string             `json:"verdict"`
			Evidence map[string]float64 `json:"evidence"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"request_conservation": {"difference"},
		"token_conservation":   {"prompt_difference", "generation_difference"},
	}
	for _, f := range s.Findings {
		fields, ok := want[f.ID]
		if !ok {
			continue
		}
		delete(want, f.ID)
		t.Logf("%s: %s %v", f.ID, f.Verdict, f.Evidence)
		if f.Severity != "info" || !strings.Contains(f.Verdict, "agree") {
			t.Errorf("%s: %s: %s", f.ID, f.Severity, f.Verdict)
		}
		for _, k := range fields {
			if v, ok := f.Evidence[k]; !ok || v != 0 {
				t.Errorf("%s: %s = %v (present %v), want exactly 0", f.ID, k, v, ok)
			}
		}
		if f.ID == "request_conservation" && (f.Evidence["client_ok"] != 24 || f.Evidence["client_failed"] != 0) {
			t.Errorf("request_conservation: %v ok, %v failed, want 24 and 0", f.Evidence["client_ok"], f.Evidence["client_failed"])
		}
	}
	for id := range want {
		t.Errorf("no %s finding in summary.json", id)
	}
}
