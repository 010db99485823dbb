package calibrate

import (
	"context"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/workload"
)

// TestSimResponsesTemplate: calibrating the responses endpoint counts the
// chat template the engine applies to its input, through the dialect's
// tokenizer (vLLM) or through probe requests to /v1/responses, whose
// usage.input_tokens they read (FastDeploy has no tokenizer API).
func TestSimResponsesTemplate(t *testing.T) {
	t.Parallel()
	for dialect, method := range map[string]string{sim.DialectVLLM: MethodTokenize, sim.DialectFastDeploy: MethodProbe} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			base, model := startSim(t, dialect, 4, 3)
			res, err := Probe(context.Background(), Config{BaseURL: base, Model: model, Dialect: dialect, Endpoint: endpoints.Responses})
			if err != nil {
				t.Fatalf("Probe: %v (%q)", err, res.Notes)
			}
			if res.Endpoint != endpoints.Responses || res.Method != method || res.RequestTokens != 4 || res.MessageTokens != 3 || !res.MessagesMeasured {
				t.Errorf("configured 4 per request + 3 per message, calibration found %s\n%+v", res, res)
			}
			msgs := []workload.Message{{Role: "system", Content: "a b"}, {Role: "user", Content: "c d e"}}
			if got, want := responsesInputTokens(t, base, model, msgs), usagePromptTokens(t, base, model, msgs); got != want {
				t.Errorf("the engine counts the input as %d tokens, the same messages on chat as %d", got, want)
			}
		})
	}
}

// responsesInputTokens sends msgs to /v1/responses through the probe
// counter and returns usage.input_tokens.
func responsesInputTokens(t *testing.T, base, model string, msgs []workload.Message) int {
	t.Helper()
	cfg, err := Config{BaseURL: base, Model: model, Endpoint: endpoints.Responses}.validate()
	if err != nil {
		t.Fatal(err)
	}
	c := newProbe(cfg, newPoster(cfg), base)
	if !strings.Contains(c.source, "/v1/responses") {
		t.Errorf("probe source %q", c.source)
	}
	n, err := c.request(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
