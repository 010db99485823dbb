package gates

import (
	"testing"

	"github.com/llmbench-org/llmbench/report"
)

func TestSearchMetrics(t *testing.T) {
	t.Parallel()
	hi := 17.2
	found := report.Summary{Search: &report.SearchResult{Over: "rate", LoadUnit: "requests/s", Capacity: 15.7, CapacityLo: 15.7,
		CapacityHi: &hi, Status: "bracketed", ProbesUsed: 6, MaxProbes: 8, Target: 0.9}}
	below := report.Summary{Search: &report.SearchResult{Over: "rate", LoadUnit: "requests/s", CapacityHi: &hi, Status: "below_min", ProbesUsed: 2, MaxProbes: 8}}
	cut := report.Summary{Search: &report.SearchResult{Over: "rate", LoadUnit: "requests/s", Capacity: 4, Status: "unfinished", ProbesUsed: 2, MaxProbes: 8}}
	for _, tc := range []struct {
		name string
		expr string
		s    report.Summary
		want Status
	}{
		{"found, above the bar", "search.capacity >= 15", found, Pass},
		{"found, below the bar", "search.capacity >= 16", found, Fail},
		{"no load passed: 0, a fail", "search.capacity >= 1", below, Fail},
		{"cut short: cannot tell", "search.capacity >= 1", cut, Error},
		{"not a search", "search.capacity >= 1", report.Summary{}, Error},
		{"probes", "search.probes <= 8", found, Pass},
		{"probes over", "search.probes <= 5", found, Fail},
	} {
		g, err := ParseAll([]string{tc.expr})
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		res := g.Evaluate(tc.s, nil)
		if len(res) != 1 || res[0].Status != tc.want {
			t.Errorf("%s: %s on %+v: %+v, want %s", tc.name, tc.expr, tc.s.Search, res, tc.want)
		}
	}
}
