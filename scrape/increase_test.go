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

// TestResetPerSeries: one dp rank restarts while the other counts on. The
// total still grows (858 → 940), so only the series show the reset; the
// restarted rank counts from 0: 40 + 400 = 440, not 82.
func TestResetPerSeries(t *testing.T) {
	t.Parallel()
	exp := func(e0, e1 int) string {
		return "# TYPE vllm:request_success_total counter\n" +
			"vllm:request_success_total{engine=\"0\",finished_reason=\"stop\"} " + itoa(e0) + "\n" +
			"vllm:request_success_total{engine=\"1\",finished_reason=\"stop\"} " + itoa(e1) + "\n"
	}
	before, after := mapVLLM(t, exp(358, 500)), mapVLLM(t, exp(40, 900))
	d := Delta(before, after)
	if got := d.Counters[RequestsFinished]; got != 440 {
		t.Errorf("Δ finished = %v, want 440 (the restarted rank from 0)", got)
	}
	if diff := cmp.Diff([]Concept{RequestsFinished}, d.Resets); diff != "" {
		t.Errorf("Resets (-want +got):\n%s", diff)
	}
	rows := []Row{{Target: "t", OK: true, Snapshot: &before}, {Target: "t", OK: true, At: time.Second, Snapshot: &after}}
	inc, resets := Increase(rows)
	if inc.Counters[RequestsFinished] != 440 {
		t.Errorf("increase = %v, want 440", inc.Counters[RequestsFinished])
	}
	want := []Reset{{Concept: RequestsFinished, Target: "t", At: time.Second, Series: `engine="0",finished_reason="stop"`, Before: 358, After: 40}}
	if diff := cmp.Diff(want, resets); diff != "" {
		t.Errorf("resets (-want +got):\n%s", diff)
	}
	// Two replicas summed keep their series, so the reset survives a Sum.
	other := mapVLLM(t, "# TYPE vllm:request_success_total counter\nvllm:request_success_total{finished_reason=\"stop\"} 7\n")
	if d := Delta(Sum(before, other), Sum(after, other)); d.Counters[RequestsFinished] != 440 || len(d.Resets) != 1 {
		t.Errorf("Δ of sums = %v (resets %v), want 440 with the reset", d.Counters[RequestsFinished], d.Resets)
	}
}
