package gates

import "github.com/llmbench-org/llmbench/report"

// searchMetrics are a capacity search's answer (docs/decisions/0040):
// search.capacity, the largest load whose SLO verdict passed (requests/s for
// a search over rate, users over concurrency), and search.probes, what it
// cost. A search that was cut short, or whose every probe failed, has no
// capacity to gate on, and says why; one whose every probe failed has 0.
func (v vocabularyBuilder) searchMetrics() {
	v.add(metric{name: "search.capacity", unit: count, better: higher,
		doc: "a capacity search's answer: the largest load (requests/s, or users) whose SLO verdict passed",
		read: func(s *report.Summary) reading {
			switch {
			case s.Search == nil:
				return absent("the run has no search")
			case s.Search.Status == "unfinished":
				return absent("the search did not finish: %s", s.Search.String())
			}
			// No load passed (below_min): 0, so "search.capacity >= X" fails
			// rather than going unevaluated.
			return value(s.Search.Capacity)
		}})
	v.add(metric{name: "search.probes", unit: count, better: lower, doc: "the probes a capacity search ran, re-probes included",
		read: func(s *report.Summary) reading {
			if s.Search == nil {
				return absent("the run has no search")
			}
			return value(float64(s.Search.ProbesUsed))
		}})
}
