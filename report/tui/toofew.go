package tui

import (
	"sort"
	"sync"

	"github.com/llmbench-org/llmbench/internal/interval"
	"github.com/llmbench-org/llmbench/report/latencytable"
)

// The live view shows each window quantile with the window's sample count
// and marks one whose count is too small for its rank (its 95 % interval
// would be open on a side), as the final reports do; it shows no interval
// itself (docs/decisions/0038): the window's samples are the live
// package's, and reading order statistics of them every frame costs more
// than a glance at the screen is worth. Whether n is too few depends on n
// and the percentile only, so the view needs nothing but the count.

var (
	minSamplesMu sync.Mutex
	minSamplesOf = map[float64]int{} // percentile → the fewest samples that bound it on both sides
)

// minSamples is the fewest samples whose order statistics bound the
// percentile p (in percent) on both sides at interval.Confidence: found
// once per percentile by bisection over interval.QuantileRanks (a bound
// needs more samples, never fewer, as n grows), then remembered.
func minSamples(p float64) int {
	minSamplesMu.Lock()
	defer minSamplesMu.Unlock()
	if n, ok := minSamplesOf[p]; ok {
		return n
	}
	bounded := func(n int) bool {
		lo, hi := interval.QuantileRanks(p/100, interval.Confidence, n)
		return lo >= 1 && hi <= n
	}
	const most = 1 << 24 // past it (p within 2e-7 of 0 or 1), call every window too few
	n := most
	if bounded(most) {
		n = sort.Search(most, func(n int) bool { return n > 0 && bounded(n) })
	}
	minSamplesOf[p] = n
	return n
}

// tooFewMark is latencytable.TooFewMark when n samples are too few for the
// percentile p's rank, else "".
func tooFewMark(p float64, n int) string {
	if n < minSamples(p) {
		return latencytable.TooFewMark
	}
	return ""
}
