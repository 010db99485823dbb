package gates

import (
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report"
)

// TestUnmeasuredLatency: a gate on a client latency nobody could measure
// says how many requests were unmeasured and why; one on a measured latency
// is decided as ever.
func TestUnmeasuredLatency(t *testing.T) {
	t.Parallel()
	noStream := report.Summary{Client: report.ClientSide{
		Requests: report.RequestCounts{Sent: 5, OK: 5},
		Latency:  report.Latencies{E2E: report.Dist{N: 5, P99: 0.5}},
		Unmeasured: map[string]map[string]int{
			"ttft": {"not streamed": 5}, "ttfc": {"not streamed": 5}, "itl": {"not streamed": 5}, "tpot": {"not streamed": 5},
		},
	}}
	oneToken := noStream
	oneToken.Client.Unmeasured = map[string]map[string]int{"tpot": {"fewer than two output tokens": 3, "not streamed": 2}}
	tests := []struct {
		name, expr string
		s          report.Summary
		status     Status
		reason     string
	}{
		{"ttft not streamed", "client.ttft.p99 < 1s", noStream, Error, "no request produced a first token: 5 of 5 successful requests unmeasured (not streamed 5)"},
		{"ttfc not streamed", "client.ttfc.p50 < 1s", noStream, Error, "no request produced content: 5 of 5 successful requests unmeasured (not streamed 5)"},
		{"tpot by reason", "client.tpot.mean < 1s", oneToken, Error, "5 of 5 successful requests unmeasured (fewer than two output tokens 3, not streamed 2)"},
		{"e2e measured", "client.e2e.max < 1s", noStream, Pass, "< 1s"},
		{"a p99 of 5 is undecided", "client.e2e.p99 < 1s", noStream, Inconclusive, "5 samples are too few to bound a p99"},
		{"not streamed count", "health.not_streamed == 0", report.Summary{Health: report.Health{NotStreamed: 2}}, Fail, "2 is not == 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := Parse(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			r := Gates{g}.Evaluate(tt.s, nil)[0]
			if r.Status != tt.status || !strings.Contains(r.Reason, tt.reason) {
				t.Errorf("%s: %s (%s); want %s with %q", tt.expr, r.Status, r.Reason, tt.status, tt.reason)
			}
		})
	}
}
