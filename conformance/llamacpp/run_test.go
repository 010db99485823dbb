package llamacpp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/internal/testkit"
)

// TestLLMBenchRunConserves: an llmbench run against the real llama-server
// (engine kind external, the URL alone; the byte tokens banned through
// request.extra_body so that no stream meets the parser error) finishes every
// request, and its reconciliation finds the engine's token counters moved by
// exactly what the client counted: the generation counter by the usage's
// completion tokens, the prompt counter by the usage's prompt tokens less
// its cached ones (llama.cpp counts the tokens it computed). The
// server counts no requests, so request conservation rests on the client's
// count: every request ok, none failed.
func TestLLMBenchRunConserves(t *testing.T) {
	both(t)
	<-built
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	pairs := make([]string, 0, lastByteToken-firstByteToken+1)
	for id := firstByteToken; id <= lastByteToken; id++ {
		pairs = append(pairs, fmt.Sprintf("[%d, false]", id))
	}
	scenario := testkit.WriteScenario(t, `name: llamacpp-conformance
seed: 3
engine:
  kind: external
  base_url: `+real.root+`/v1
workload:
  concurrency: 3
  requests: 24
  prompt_tokens: {dist: uniform, min: 8, max: 48}
  output_tokens: {dist: uniform, min: 4, max: 32}
request:
  extra_body: {logit_bias: [`+strings.Join(pairs, ", ")+`]}
scrape:
  interval: 500ms
`)
	_, raw, _ := runCLI(t, scenario)
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
	seen := map[string]bool{}
	for _, f := range s.Findings {
		switch f.ID {
		case "request_conservation":
			seen[f.ID] = true
			t.Logf("%s: %s %v", f.ID, f.Verdict, f.Evidence)
			if f.Evidence["client_ok"] != 24 || f.Evidence["client_failed"] != 0 || f.Evidence["client_sent"] != 24 {
				t.Errorf("request_conservation: %v sent, %v ok, %v failed, want 24, 24 and 0", f.Evidence["client_sent"], f.Evidence["client_ok"], f.Evidence["client_failed"])
			}
		case "token_conservation":
			seen[f.ID] = true
			t.Logf("%s: %s %v", f.ID, f.Verdict, f.Evidence)
			ev := f.Evidence
			if f.Severity != "info" || !strings.Contains(f.Verdict, "generation tokens agree") {
				t.Errorf("%s: %s: %s", f.ID, f.Severity, f.Verdict)
			}
			if v, ok := ev["generation_difference"]; !ok || v != 0 {
				t.Errorf("%s: generation_difference = %v (present %v), want exactly 0", f.ID, v, ok)
			}
			if d, ok := ev["prompt_difference"]; !ok || d != -ev["client_cached_tokens"] {
				t.Errorf("%s: prompt_difference = %v (present %v), want exactly minus the %v cached tokens", f.ID, d, ok, ev["client_cached_tokens"])
			}
		}
	}
	for _, id := range []string{"request_conservation", "token_conservation"} {
		if !seen[id] {
			t.Errorf("no %s finding in summary.json", id)
		}
	}
}
