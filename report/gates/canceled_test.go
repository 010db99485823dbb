package gates

import (
	"testing"

	"github.com/llmbench-org/llmbench/report"
)

// Requests the run's abort cancelled (a second Ctrl-C) are not failures:
// the error metrics leave them out: 1 failed of 90 has a Wilson interval
// of 0.20 % … 6.03 %, which 11 of 100 (6.3 % … 18.6 %) would not have.
func TestCanceledRequestsAreNoErrors(t *testing.T) {
	t.Parallel()
	var s report.Summary
	s.Client.Requests = report.RequestCounts{Sent: 100, OK: 89, Failed: 1, Canceled: 10, Errors: map[string]int{"timeout": 1}}
	gs, err := ParseAll([]string{"client.error_rate < 8%", "client.requests.failed == 1", "client.requests.canceled == 10", "client.errors.canceled == 10"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range gs.Evaluate(s, nil) {
		if r.Status != Pass {
			t.Errorf("%s: %s (%s)", r.Gate, r.Status, r.Reason)
		}
	}
	s.Client.Requests = report.RequestCounts{Sent: 5, Canceled: 5}
	gs, _ = ParseAll([]string{"client.error_rate < 1%"})
	if r := gs.Evaluate(s, nil)[0]; r.Status != Error {
		t.Errorf("every request cancelled: error rate %s (%s), want it unevaluable", r.Status, r.Reason)
	}
}
