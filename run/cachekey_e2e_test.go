package run

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/report"
)

// TestColdCacheWithAPIKey: against an engine that requires an API key (the
// built-in one, SGLang's dialect, whose /flush_cache its --api-key guards),
// a cold sweep's resets carry the run's key and every point starts empty;
// when the reset is refused (a proxy in front answering 401, 404 or 405),
// each phase names the endpoint and the status, cache_reset_failed warns,
// and cold_cache_hits still fires for the point that hit the previous
// point's prompts. The key is written nowhere in the run directory.
func TestColdCacheWithAPIKey(t *testing.T) {
	t.Parallel()
	const key = "sk-llmbench-cold-4e1d"
	for _, tt := range []struct {
		name   string
		refuse int // the proxy's answer to /flush_cache; 0 passes it on
		want   string
	}{
		{"passes", 0, ""},
		{"401", http.StatusUnauthorized, "POST /flush_cache: HTTP 401 Unauthorized (the engine refused the run's API key)"},
		{"404", http.StatusNotFound, "POST /flush_cache: HTTP 404 Not Found (the engine does not serve it"},
		{"405", http.StatusMethodNotAllowed, "POST /flush_cache: HTTP 405 Method Not Allowed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := sim.Preset("tiny")
			if err != nil {
				t.Fatal(err)
			}
			eng, ep := startSim(t, sim.Config{Dialect: sim.DialectSGLang, Params: p, APIKey: key})
			root := strings.TrimSuffix(ep.BaseURL, "/v1")
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/flush_cache" && tt.refuse != 0 {
					w.WriteHeader(tt.refuse)
					_, _ = fmt.Fprintf(w, `{"detail": "refused; you sent %s"}`, r.Header.Get("Authorization"))
					return
				}
				relayTo(t, w, r, root)
			}))
			defer proxy.Close()
			path := writeScenario(t, `
name: cold-key
seed: 2
model: `+ep.Model+`
engine: {kind: external, dialect: sglang, base_url: `+proxy.URL+`/v1, metrics_url: `+proxy.URL+`/metrics, api_key_env: LLMBENCH_TEST_KEY}
workload:
  sweep: {concurrencies: [1, 4]}
  requests: 16
  dataset: {type: shared_prefix, groups: 16, prompts_per_group: 1, prefix_tokens: 96}
  prompt_tokens: 8
  output_tokens: 4
  cache: cold
scrape: {interval: 250ms}
`)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cio, stdout, stderr := testIO(nil)
			cio.io.Getenv = func(name string) string {
				if name == "LLMBENCH_TEST_KEY" {
					return key
				}
				return ""
			}
			dir, err := runScenario(ctx, runOpts{scenario: path, runsDir: t.TempDir(), output: "plain", every: time.Minute}, cio)
			if err != nil && !strings.Contains(err.Error(), "gates") {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			s, err := report.Build(dir)
			if err != nil {
				t.Fatal(err)
			}
			if s.Client.Requests.OK != 32 || len(s.Phases) != 2 {
				b, _ := os.ReadFile(filepath.Join(dir, "requests.jsonl"))
				for _, l := range strings.Split(string(b), "\n") {
					if strings.Contains(l, "error_class") {
						t.Log(l[:min(len(l), 600)])
					}
				}
				t.Fatalf("%d requests ok, %d phases: the key did not reach the engine?\n%s", s.Client.Requests.OK, len(s.Phases), stderr)
			}
			findings := map[string]string{}
			for _, f := range s.Findings {
				findings[f.ID] += string(f.Severity) + ": " + f.Verdict + "\n"
			}
			if tt.refuse == 0 {
				for _, ph := range s.Phases {
					if c := ph.Cache; c == nil || c.Reset != "ok" || c.CachedTokens != 0 {
						t.Errorf("phase %s: %+v", ph.Name, ph.Cache)
					}
				}
				if eng.CacheResets() != 2 || findings[report.IDCacheResetFailed] != "" || findings[report.IDColdCacheHits] != "" {
					t.Errorf("%d resets; findings %v", eng.CacheResets(), findings)
				}
			} else {
				for _, ph := range s.Phases {
					if c := ph.Cache; c == nil || !strings.HasPrefix(c.Reset, tt.want) {
						t.Errorf("phase %s: %+v\nwant the reset %q", ph.Name, ph.Cache, tt.want)
					}
				}
				if c := s.Phases[1].Cache; c.CachedTokens == 0 {
					t.Errorf("the second point hit nothing: %+v", c)
				}
				if eng.CacheResets() != 0 || !strings.Contains(findings[report.IDCacheResetFailed], "warn: ") ||
					!strings.Contains(findings[report.IDColdCacheHits], "warn: phase concurrency-4 was meant to start cold, yet it reported cache hits") {
					t.Errorf("%d resets; findings %v", eng.CacheResets(), findings)
				}
				if !strings.Contains(stdout.String(), "cold (not reset)") {
					t.Errorf("the text summary does not say the points were not reset:\n%s", stdout)
				}
			}
			// The key went on the wire only: no file of the run holds it.
			err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(p)
				if err == nil && strings.Contains(string(b), key) {
					t.Errorf("%s holds the API key", p)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// relayTo passes one request on to the engine at root and streams its answer
// back as it comes.
func relayTo(t *testing.T, w http.ResponseWriter, r *http.Request, root string) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, root+r.URL.RequestURI(), r.Body)
	if err != nil {
		t.Error(err)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
			w.(http.Flusher).Flush()
		}
		if err != nil {
			if err != io.EOF {
				t.Logf("relay %s: %v", r.URL.Path, err)
			}
			return
		}
	}
}
