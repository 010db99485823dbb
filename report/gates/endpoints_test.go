package gates

import (
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report"
)

// TestEndpointMetrics: each endpoint's figures read by name (client.<name>,
// "-" as "_"), their percentiles and phases too; absent, saying why, when
// the run sent the endpoint nothing or has no per-endpoint figures.
func TestEndpointMetrics(t *testing.T) {
	t.Parallel()
	e2e := report.Dist{N: 2000, Mean: 0.02, P50: 0.018, P90: 0.03, P99: 0.05, Max: 0.09, Quantiles: map[string]float64{"p99.9": 0.08},
		CI: &report.DistCI{Quantiles: map[string]report.Bounds{"p99": {Lo: 0.045, Hi: 0.055}, "p50": {Lo: 0.017, Hi: 0.019}}}}
	s := report.Summary{Percentiles: []float64{50, 99, 99.9}, Client: report.ClientSide{Endpoints: []report.EndpointSide{
		{Endpoint: "embeddings", Kind: "embeddings", OK: 2000, Failed: 1, RequestsPerSec: 40, InputsPerSec: 320, InputTokensPerSec: 20480,
			Latency: report.EndpointLatency{E2E: e2e}, NotApplicable: []string{"ttft", "ttfc", "itl", "tpot"}},
		{Endpoint: "tei-rerank", Kind: "rerank", OK: 10, RequestsPerSec: 2, InputsPerSec: 32},
	}}}
	s.Phases = []report.PhaseResult{{Name: "main", Measured: true, Client: s.Client}}
	for _, tt := range []struct {
		expr   string
		s      report.Summary
		status Status
		reason string
	}{
		{"client.embeddings.e2e.p99 < 100ms", s, Pass, ""},
		{"client.embeddings.e2e.p99.9 < 50ms", s, Fail, ""},
		{"client.embeddings.inputs_per_s > 300", s, Pass, ""},
		{"client.embeddings.input_tokens_per_s > 30000", s, Fail, ""},
		{"client.embeddings.failed == 0", s, Fail, ""},
		{"phase[main].client.embeddings.requests_per_s >= 40", s, Pass, ""},
		{"client.tei_rerank.inputs_per_s > 30", s, Pass, ""},
		{"client.rerank.inputs_per_s > 1", s, Error, "the run sent no request to rerank"},
		{"client.tei_rerank.e2e.p99 < 1s", s, Error, "no request succeeded"},
		{"client.embeddings.e2e.p99 < 1s", report.Summary{}, Error, "no per-endpoint figures"},
		{"client.chat.ttft.p99 < 1s", s, Error, "the run sent no request to chat"},
	} {
		g, err := Parse(tt.expr)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		r := Gates{g}.Evaluate(tt.s, nil)[0]
		if r.Status != tt.status || !strings.Contains(r.Reason, tt.reason) {
			t.Errorf("%s: %s (%s); want %s with %q", tt.expr, r.Status, r.Reason, tt.status, tt.reason)
		}
	}
	for _, bad := range []string{"client.embeddings.ttft.p99 < 1s", "client.chat.inputs_per_s > 1"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s parsed: a latency or a rate that does not apply to the endpoint", bad)
		}
	}
	// A pooling endpoint's generation latency says it does not apply.
	for _, bad := range []string{"client.embeddings.ttft.p99 < 1s", "client.tei_rerank.itl.mean < 1s", "phase[main].client.rerank.tpot.p50 < 1s"} {
		_, err := Parse(bad)
		if err == nil || !strings.Contains(err.Error(), "does not apply to") || !strings.Contains(err.Error(), ".e2e.*") {
			t.Errorf("%s: %v; want that it does not apply, and the e2e metrics", bad, err)
		}
	}
}
