package run

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
)

// TestPoolingScenariosAgainstTruth runs the shipped embeddings and rerank
// examples (and rerank on TEI's endpoint) against the built-in engine, 48
// requests each instead of their duration and without their gates (which
// TestExampleScenarioGatesParse reads), and checks every count exactly
// against the engine's ground truth: one record per request, each with the
// inputs it carried and the answers that came back, the engine's prompt
// tokens, the summary's per-endpoint figures, and the engine's counters
// reconciled in its own units (one request per input).
func TestPoolingScenariosAgainstTruth(t *testing.T) {
	const requests = 48
	for _, c := range []struct {
		example, endpoint string
		inputs, results   int // per request
		promptPerRequest  int // the engine's count: words, the query again with each document
	}{
		{"embeddings.yaml", "embeddings", 8, 8, 8 * 64},
		{"rerank.yaml", "rerank", 16, 4, 16 * (48 + 48)},
		{"rerank.yaml", "tei-rerank", 16, 4, 16 * (48 + 48)},
	} {
		t.Run(c.endpoint, func(t *testing.T) {
			raw, err := fsReadExample(c.example)
			if err != nil {
				t.Fatal(err)
			}
			yaml := strings.Replace(raw, "duration: 15s", "requests: 48", 1)
			yaml = strings.Replace(yaml, "endpoint: rerank\n", "endpoint: "+c.endpoint+"\n", 1)
			yaml = yaml[:strings.Index(yaml, "gates:")] + yaml[strings.Index(yaml, "scrape:"):]
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cio, _, stderr := testIO(nil)
			dir, err := runScenario(ctx, runOpts{scenario: writeScenario(t, yaml), runsDir: t.TempDir(), output: "plain", every: time.Second}, cio)
			if err != nil {
				t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
			}
			records := readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile))
			byID := map[string]sim.RequestTruth{}
			for _, tr := range readJSONL[sim.RequestTruth](t, filepath.Join(dir, rundir.TruthFile)) {
				byID[tr.ID] = tr
			}
			if len(records) != requests || len(byID) != requests {
				t.Fatalf("%d records and %d truths, want %d of each", len(records), len(byID), requests)
			}
			for _, r := range records {
				tr, ok := byID[r.ID]
				switch {
				case !r.OK() || !ok:
					t.Fatalf("request %s: %s %s (truth found %v)", r.ID, r.ErrorClass, r.Error, ok)
				case r.Endpoint != c.endpoint || r.Inputs != c.inputs || tr.Inputs != c.inputs || r.Results != c.results || tr.Results != c.results:
					t.Errorf("request %s: endpoint %q, inputs %d (engine %d), results %d (engine %d)", r.ID, r.Endpoint, r.Inputs, tr.Inputs, r.Results, tr.Results)
				case r.FirstToken != 0 || r.Chunks != nil || r.OutputTokens != 0 || r.MaxTokens != 0 || tr.OutputTokens != 0:
					t.Errorf("request %s: a pooling request with output: %+v", r.ID, r)
				case tr.PromptTokens != c.promptPerRequest || r.TargetPromptTokens != c.promptPerRequest:
					t.Errorf("request %s: the engine counted %d prompt tokens, the plan %d, want %d", r.ID, tr.PromptTokens, r.TargetPromptTokens, c.promptPerRequest)
				case c.endpoint == "tei-rerank" && (r.PromptTokens != 0 || r.TokenSource != ""):
					t.Errorf("request %s: TEI sends no usage, the record has %d tokens from %q", r.ID, r.PromptTokens, r.TokenSource)
				case c.endpoint != "tei-rerank" && (r.PromptTokens != tr.PromptTokens || r.TokenSource != client.TokensFromUsage):
					t.Errorf("request %s: %d prompt tokens from %q, the engine counted %d", r.ID, r.PromptTokens, r.TokenSource, tr.PromptTokens)
				}
			}

			var s report.Summary
			if b, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile)); err != nil || json.Unmarshal(b, &s) != nil {
				t.Fatalf("summary.json: %v", err)
			}
			if len(s.Client.Endpoints) != 1 {
				t.Fatalf("per-endpoint figures %+v, want one endpoint", s.Client.Endpoints)
			}
			e := s.Client.Endpoints[0]
			tokens := requests * c.promptPerRequest
			if c.endpoint == "tei-rerank" {
				tokens = 0
			}
			if e.Endpoint != c.endpoint || e.OK != requests || e.Failed != 0 || e.Inputs != requests*c.inputs || e.Results != requests*c.results ||
				e.InputTokens != tokens || e.Latency.E2E.N != requests || e.Latency.E2E.CI == nil || e.Latency.TTFT != nil ||
				strings.Join(e.NotApplicable, ",") != "ttft,ttfc,itl,tpot" || e.InputsPerSec <= 0 || e.RequestsPerSec*float64(c.inputs) != e.InputsPerSec {
				t.Errorf("per-endpoint figures %+v", e)
			}
			if why := s.Client.Unmeasured["ttft"]; why["does not apply (pooling: nothing generated)"] != requests {
				t.Errorf("unmeasured TTFT %v, want every request said not to apply", why)
			}
			// The engine counted one finished request per input (vLLM's
			// units) and its prompt tokens; the reconciliation agrees.
			if s.Server == nil || s.Server.Counters["requests_finished"] != float64(requests*c.inputs) || s.Server.Counters["prompt_tokens"] != float64(requests*c.promptPerRequest) ||
				s.Server.Counters["generation_tokens"] != 0 {
				t.Errorf("server counters %v", s.Server)
			}
			for _, f := range s.Findings {
				if (f.ID == "request_conservation" || f.ID == "foreign_traffic") && f.Severity != "info" {
					t.Errorf("finding %s: %s", f.ID, f.Verdict)
				}
			}
			text, err := os.ReadFile(filepath.Join(dir, "report.md"))
			if err != nil || !strings.Contains(string(text), "### Per endpoint") || !strings.Contains(string(text), "TTFT, TTFC, ITL, TPOT") {
				t.Errorf("report.md has no per-endpoint table (%v)", err)
			}
		})
	}
}

// fsReadExample is a shipped example scenario's text.
func fsReadExample(name string) (string, error) {
	b, err := fs.ReadFile(scenarios.Examples(), name)
	return string(b), err
}
