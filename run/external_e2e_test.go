package run

import (
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/report"
)

// TestExternalEngineFoundOut points a scenario that names only the engine's
// base URL at a running engine: llmbench asks /v1/models for the model,
// finds /metrics beside the API, says so, and reports both views.
func TestExternalEngineFoundOut(t *testing.T) {
	t.Parallel()
	_, ep := startSim(t, sim.Config{Dialect: sim.DialectVLLM})
	yaml := `
name: found-out
engine: {kind: external, base_url: "` + ep.BaseURL + `"}
workload: {concurrency: 2, requests: 12, prompt_tokens: 16, output_tokens: 8}
scrape: {interval: 200ms}
`
	s := runForSummary(t, yaml)
	if s.Engine.Model != sim.DefaultModel || s.Engine.MetricsURL != ep.MetricsURL || s.Engine.Dialect != sim.DialectVLLM {
		t.Errorf("engine %+v, want model %s and metrics %s (vllm)", s.Engine, sim.DefaultModel, ep.MetricsURL)
	}
	var text strings.Builder
	if err := report.RenderText(&text, s); err != nil {
		t.Fatal(err)
	}
	if len(s.Engine.Notes) != 3 || !strings.Contains(text.String(), "  model "+sim.DefaultModel+": the only one") ||
		!strings.Contains(text.String(), "dialect vllm, detected from the metric names") {
		t.Errorf("notes %q; the summary:\n%s", s.Engine.Notes, text.String())
	}
	if s.Client.Requests.OK != 12 || s.Server == nil || s.Server.Counters["requests_finished"] != 12 {
		t.Errorf("client ok %d, server view %+v: want 12 on both sides", s.Client.Requests.OK, s.Server)
	}
}
