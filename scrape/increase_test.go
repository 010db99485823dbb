package scrape

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestIncreaseAcrossARestart: an engine restarting mid-run (requests_finished
// 358 → 40) loses nothing it counted before the restart: the delta is taken
// scrape by scrape, counting from 0 after the reset, as increase() does.
func TestIncreaseAcrossARestart(t *testing.T) {
	t.Parallel()
	hist := func(c0, count, sum float64) Histogram {
		return Histogram{Bounds: []float64{1}, Cumulative: []float64{c0}, Count: count, Sum: sum}
	}
	row := func(at int, fin float64, h Histogram) Row {
		return Row{Target: "http://e/metrics", OK: true, At: time.Duration(at) * time.Second,
			Snapshot: &Snapshot{Dialect: "vllm", Gauges: map[Concept]float64{RequestsRunning: float64(at)},
				Counters: map[Concept]float64{RequestsFinished: fin}, Histograms: map[Concept]Histogram{E2E: h}}}
	}
	rows := []Row{
		row(0, 100, hist(90, 100, 50)),
		row(1, 358, hist(300, 358, 200)),
		{Target: "http://e/metrics", At: 2 * time.Second, Error: "connection refused"}, // restarting
		row(3, 40, hist(30, 40, 20)),
		row(4, 100, hist(80, 100, 60)),
	}
	d, resets := Increase(rows)
	if got := d.Counters[RequestsFinished]; got != 358 {
		t.Errorf("increase of finished = %v, want 258 before the restart + 100 after = 358 (the ends alone say %v)",
			got, Delta(*rows[0].Snapshot, *rows[4].Snapshot).Counters[RequestsFinished])
	}
	want := Histogram{Bounds: []float64{1}, Cumulative: []float64{290}, Count: 358, Sum: 210}
	if diff := cmp.Diff(want, d.Histograms[E2E]); diff != "" {
		t.Errorf("e2e increase (-want +got):\n%s", diff)
	}
	if d.Gauges[RequestsRunning] != 4 {
		t.Errorf("gauges are the last scrape's: %v", d.Gauges)
	}
	wantResets := []Reset{
		{Concept: RequestsFinished, Target: "http://e/metrics", At: 3 * time.Second, Before: 358, After: 40},
		{Concept: E2E, Target: "http://e/metrics", At: 3 * time.Second, Before: 358, After: 40},
	}
	if diff := cmp.Diff(wantResets, resets); diff != "" {
		t.Errorf("resets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Concept{RequestsFinished, E2E}, d.Resets); diff != "" {
		t.Errorf("Resets (-want +got):\n%s", diff)
	}
}

// TestIncreaseOfTwoIsDelta: with two scrapes Increase is Delta, on real
// fixtures, reset or not.
func TestIncreaseOfTwoIsDelta(t *testing.T) {
	t.Parallel()
	snap := func(name string) *Snapshot {
		fams, err := Parse(fixture(t, name), ctText)
		if err != nil {
			t.Fatal(err)
		}
		s := sglang.Map(fams)
		return &s
	}
	pairs := [][2]string{{"sglang.txt", "sglang_created.txt"}, {"sglang_created.txt", "sglang.txt"}, {"sglang.txt", "sglang.txt"}}
	for _, p := range pairs {
		a, b := snap(p[0]), snap(p[1])
		got, _ := Increase([]Row{{OK: true, Snapshot: a}, {OK: true, Snapshot: b}})
		if diff := cmp.Diff(Delta(*a, *b), got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s → %s: Increase differs from Delta (-delta +increase):\n%s", p[0], p[1], diff)
		}
	}
}
