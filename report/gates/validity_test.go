package gates

import (
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/report"
)

// health.valid and one metric per validity state: a run where 39 % of
// requests failed is not valid and in failures_over_bound; one whose
// failures its scenario declared expected is valid, in
// failures_within_bound; a clean one is in no state.
func TestValidityStateGates(t *testing.T) {
	t.Parallel()
	base := world{seed: 5, n: 200, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond}
	failing := base
	failing.failed = 78 // 39 %
	declared := base
	declared.failed, declared.maxFailureRate = 4, 0.05

	gs := mustParse(t, "health.valid == true", "health.state.failures_over_bound == false",
		"health.state.failures_within_bound == false", "health.state.host_delayed == false")
	for _, tt := range []struct {
		name string
		s    report.Summary
		want []Status
	}{
		{"clean", base.run(t).Summary, []Status{Pass, Pass, Pass, Pass}},
		{"39% failed", failing.run(t).Summary, []Status{Fail, Fail, Pass, Pass}},
		{"failures declared expected", declared.run(t).Summary, []Status{Pass, Pass, Fail, Pass}},
	} {
		for j, r := range gs.Evaluate(tt.s, nil) {
			if r.Status != tt.want[j] {
				t.Errorf("%s, %s: %s (%s), want %s", tt.name, r.Gate, r.Status, r.Reason, tt.want[j])
			}
		}
	}
}
