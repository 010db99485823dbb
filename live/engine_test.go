package live

import (
	"math"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/scrape"
)

// ttftRow is a successful scrape of target at second sec whose TTFT
// histogram (bounds 0.1, 0.5, 1 s) holds cum observations.
func ttftRow(target string, sec int, cum [3]float64, sum float64) scrape.Row {
	return scrape.Row{Target: target, At: time.Duration(sec) * time.Second, OK: true, Snapshot: &scrape.Snapshot{
		Histograms: map[scrape.Concept]scrape.Histogram{
			scrape.TTFT: {Bounds: []float64{0.1, 0.5, 1}, Cumulative: cum[:], Count: cum[2], Sum: sum},
		},
	}}
}

// The engine's side is its histograms' growth between the first and the last
// scrape in the window: what came before the window does not count, a
// concept the engine lacks is absent, and a change of target starts over.
func TestEngineLatenciesOverTheWindow(t *testing.T) {
	t.Parallel()
	w := newWindow(10 * time.Second)
	ps := []float64{50, 90, 99}
	if got := w.engineLatencies(0, ps); got.TTFT.Has {
		t.Fatalf("no scrape yet: %+v", got)
	}
	// Before the window: 1000 slow requests that must not count.
	rows := []scrape.Row{
		ttftRow("a", 0, [3]float64{0, 0, 1000}, 900),
		ttftRow("a", 20, [3]float64{0, 0, 1000}, 900),
		// In the window: 80 below 0.1 s, 20 in (0.1, 0.5], sum 8 s → mean 80 ms.
		ttftRow("a", 25, [3]float64{80, 100, 1100}, 908),
	}
	for i := range rows {
		w.addRow(&rows[i])
	}
	if late := w.engineLatencies(60*time.Second, ps); late.TTFT.Has {
		t.Errorf("scrapes stopped 35 s ago, yet %+v", late.TTFT)
	}
	got := w.engineLatencies(26*time.Second, ps)
	if !got.TTFT.Has || got.TTFT.N != 100 || got.TTFT.Mean != 80*time.Millisecond {
		t.Fatalf("TTFT = %+v, want 100 observations, mean 80ms", got.TTFT)
	}
	// p50: rank 50 of 80 in [0, 0.1] → 0.0625 s; p90: rank 90, 10 of 20 in (0.1, 0.5] → 0.3 s.
	want := []struct{ v, lo, hi float64 }{{0.0625, 0, 0.1}, {0.3, 0.1, 0.5}, {0.48, 0.1, 0.5}}
	for i, q := range got.TTFT.Quantiles {
		if math.Abs(q.Value-want[i].v) > 1e-9 || q.Lower != want[i].lo || q.Upper != want[i].hi {
			t.Errorf("p%g = %+v, want %v in [%v, %v]", ps[i], q, want[i].v, want[i].lo, want[i].hi)
		}
	}
	if got.ITL.Has || got.E2E.Has {
		t.Errorf("the engine exposes no ITL or E2E histogram, yet %+v", got)
	}

	// A scrape of another target starts the window over: one scrape is no delta.
	other := ttftRow("b", 26, [3]float64{1, 1, 1}, 0.05)
	w.addRow(&other)
	if got := w.engineLatencies(26*time.Second, ps); got.TTFT.Has {
		t.Errorf("one scrape of a new target gave %+v", got.TTFT)
	}
}

// The window keeps a bounded number of scrapes however long the run.
func TestEngineWindowIsBounded(t *testing.T) {
	t.Parallel()
	w := newWindow(10 * time.Second)
	for sec := range 1000 {
		r := ttftRow("a", sec, [3]float64{float64(sec), float64(sec), float64(sec)}, float64(sec)*0.05)
		w.addRow(&r)
	}
	if n := len(w.engine); n > 11 {
		t.Errorf("%d scrapes held for a 10 s window at one a second", n)
	}
	if got := w.engineLatencies(999*time.Second, []float64{50}); got.TTFT.N != 10 {
		t.Errorf("N = %v, want the 10 observations of the last 10 s", got.TTFT.N)
	}
}

// The client's window mean is the mean of its samples.
func TestQuantilesMean(t *testing.T) {
	t.Parallel()
	q := quantilesOf([]time.Duration{3 * time.Second, time.Second, 2 * time.Second}, []float64{50})
	if q.Mean != 2*time.Second || q.N != 3 {
		t.Errorf("quantilesOf = %+v, want mean 2s of 3", q)
	}
	if q := quantilesOf(nil, []float64{50}); q.Mean != 0 || q.N != 0 {
		t.Errorf("no samples: %+v", q)
	}
}
