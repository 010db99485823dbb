package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/internal/interval"
	"github.com/llmbench-org/llmbench/live"
)

// The fewest samples that bound a percentile on both sides are where
// package interval's ranks first both fall inside the sample: 6 for a
// median, 36 for a p90, 368 for a p99 (1 − 0.99^n ≥ 0.975).
func TestMinSamples(t *testing.T) {
	t.Parallel()
	for p, want := range map[float64]int{50: 6, 90: 36, 99: 368} {
		if got := minSamples(p); got != want {
			t.Errorf("minSamples(%g) = %d, want %d", p, got, want)
		}
		lo, hi := interval.QuantileRanks(p/100, interval.Confidence, want-1)
		if lo >= 1 && hi <= want-1 {
			t.Errorf("p%g: %d samples already bound it (ranks %d, %d)", p, want-1, lo, hi)
		}
	}
}

// A window quantile from too few samples is marked, with the legend under
// the rows; one from enough is not, and then there is no legend.
func TestLiveQuantilesMarkTooFew(t *testing.T) {
	t.Parallel()
	ps := []float64{50, 90, 99}
	q := func(n int) live.Quantiles {
		return live.Quantiles{N: n, Values: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}}
	}
	if row := quantileRow("TTFT", "client", ps, q(50)); !strings.Contains(row, "40.0ms†") || strings.Contains(row, "20.0ms†") {
		t.Errorf("50 samples: %q, want only the p99 marked", row)
	}
	if row := quantileRow("TTFT", "client", ps, q(400)); strings.Contains(row, "†") {
		t.Errorf("400 samples: %q, want no mark", row)
	}
	for _, c := range []struct {
		n      int
		legend bool
	}{{50, true}, {400, false}} {
		m := model{last: live.Progress{Percentiles: ps, TTFT: q(c.n), ITLMean: q(400), E2E: q(c.n)}}
		var text []string
		for _, l := range m.latencyRows(true) {
			text = append(text, l.text)
		}
		if got := strings.Contains(strings.Join(text, "\n"), "too few samples"); got != c.legend {
			t.Errorf("%d samples: legend shown %v, want %v:\n%s", c.n, got, c.legend, strings.Join(text, "\n"))
		}
	}
}
