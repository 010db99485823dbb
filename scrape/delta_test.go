package scrape

import (
	"maps"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDelta(t *testing.T) {
	t.Parallel()
	ttft := func(c0, c1, count, sum float64) Histogram {
		return Histogram{Bounds: []float64{0.1, 0.2}, Cumulative: []float64{c0, c1}, Count: count, Sum: sum}
	}
	tests := []struct {
		name          string
		before, after Snapshot
		want          Snapshot
	}{
		{
			name: "counters and histograms subtract, gauges are after's",
			before: Snapshot{Dialect: "sglang",
				Gauges:     map[Concept]float64{RequestsRunning: 16, KVCacheUsage: 0.5},
				Counters:   map[Concept]float64{RequestsFinished: 100, PromptTokens: 12800},
				Histograms: map[Concept]Histogram{TTFT: ttft(50, 90, 100, 9)}},
			after: Snapshot{Dialect: "sglang",
				Gauges:     map[Concept]float64{RequestsRunning: 3},
				Counters:   map[Concept]float64{RequestsFinished: 420, PromptTokens: 53760},
				Histograms: map[Concept]Histogram{TTFT: ttft(250, 390, 420, 39.5)}},
			want: Snapshot{Dialect: "sglang",
				Gauges:     map[Concept]float64{RequestsRunning: 3},
				Counters:   map[Concept]float64{RequestsFinished: 320, PromptTokens: 40960},
				Histograms: map[Concept]Histogram{TTFT: ttft(200, 300, 320, 30.5)}},
		},
		{
			name:   "a counter that went down was reset: after's value, marked",
			before: Snapshot{Counters: map[Concept]float64{RequestsFinished: 320, GenerationTokens: 40960}},
			after:  Snapshot{Counters: map[Concept]float64{RequestsFinished: 5, GenerationTokens: 41000}},
			want: Snapshot{Counters: map[Concept]float64{RequestsFinished: 5, GenerationTokens: 40},
				Resets: []Concept{RequestsFinished}},
		},
		{
			name:   "a histogram whose count went down was reset",
			before: Snapshot{Histograms: map[Concept]Histogram{E2E: ttft(5, 9, 10, 2), TTFT: ttft(5, 9, 10, 2)}},
			after:  Snapshot{Histograms: map[Concept]Histogram{E2E: ttft(1, 2, 2, 0.5), TTFT: ttft(6, 10, 11, 2.1)}},
			want: Snapshot{Histograms: map[Concept]Histogram{E2E: ttft(1, 2, 2, 0.5), TTFT: ttft(1, 1, 1, 0.1)},
				Resets: []Concept{E2E}},
		},
		{
			name:   "a bucket that went down is a reset even when the count grew",
			before: Snapshot{Histograms: map[Concept]Histogram{ITL: ttft(5, 9, 10, 2)}},
			after:  Snapshot{Histograms: map[Concept]Histogram{ITL: ttft(4, 12, 12, 2.5)}},
			want:   Snapshot{Histograms: map[Concept]Histogram{ITL: ttft(4, 12, 12, 2.5)}, Resets: []Concept{ITL}},
		},
		{
			name:   "changed buckets are a reset",
			before: Snapshot{Histograms: map[Concept]Histogram{TTFT: ttft(5, 9, 10, 2)}},
			after:  Snapshot{Histograms: map[Concept]Histogram{TTFT: {Bounds: []float64{0.1, 0.5}, Cumulative: []float64{6, 11}, Count: 11, Sum: 3}}},
			want: Snapshot{Histograms: map[Concept]Histogram{TTFT: {Bounds: []float64{0.1, 0.5}, Cumulative: []float64{6, 11}, Count: 11, Sum: 3}},
				Resets: []Concept{TTFT}},
		},
		{
			name:   "appeared since before: taken whole; vanished: absent",
			before: Snapshot{Counters: map[Concept]float64{Preemptions: 3}},
			after:  Snapshot{Counters: map[Concept]float64{RequestsAborted: 2}, Histograms: map[Concept]Histogram{Queue: ttft(1, 1, 1, 0.01)}},
			want:   Snapshot{Counters: map[Concept]float64{RequestsAborted: 2}, Histograms: map[Concept]Histogram{Queue: ttft(1, 1, 1, 0.01)}},
		},
		{
			name:   "resets are listed in concept order",
			before: Snapshot{Counters: map[Concept]float64{Preemptions: 3, PromptTokens: 9}},
			after:  Snapshot{Counters: map[Concept]float64{Preemptions: 1, PromptTokens: 1}},
			want:   Snapshot{Counters: map[Concept]float64{Preemptions: 1, PromptTokens: 1}, Resets: []Concept{PromptTokens, Preemptions}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Delta(tt.before, tt.after)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty(), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("Delta (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeltaFixtureRestart reads two real-shaped scrapes, the second from an
// engine that restarted in between, through the dialect.
func TestDeltaFixtureRestart(t *testing.T) {
	t.Parallel()
	snap := func(name string) Snapshot {
		fams, err := Parse(fixture(t, name), ctText)
		if err != nil {
			t.Fatal(err)
		}
		return sglang.Map(fams)
	}
	before, after := snap("sglang.txt"), snap("sglang_created.txt") // 320 finished, then 12 after a restart
	d := Delta(before, after)
	if got := d.Counters[RequestsFinished]; got != 12 {
		t.Errorf("Δ finished = %v, want 12 (after a reset)", got)
	}
	if diff := cmp.Diff([]Concept{RequestsFinished, E2E}, d.Resets); diff != "" {
		t.Errorf("resets (-want +got):\n%s", diff)
	}
	if _, ok := d.Counters[PromptTokens]; ok {
		t.Error("prompt tokens vanished after the restart but are in the delta")
	}
}

func TestSum(t *testing.T) {
	t.Parallel()
	h := func(c0, c1 float64) Histogram {
		return Histogram{Bounds: []float64{0.1, 0.2}, Cumulative: []float64{c0, c1}, Count: c1, Sum: c1 / 10}
	}
	tests := []struct {
		name  string
		snaps []Snapshot
		want  Snapshot
	}{
		{
			name: "replicas: counts add, fractions average over reporters",
			snaps: []Snapshot{
				{Dialect: "vllm", Gauges: map[Concept]float64{RequestsRunning: 4, KVCacheUsage: 0.2},
					Counters: map[Concept]float64{RequestsFinished: 10}, Histograms: map[Concept]Histogram{TTFT: h(1, 10)}},
				{Dialect: "vllm", Gauges: map[Concept]float64{RequestsRunning: 6, KVCacheUsage: 0.6},
					Counters: map[Concept]float64{RequestsFinished: 20}, Histograms: map[Concept]Histogram{TTFT: h(5, 20)}, Resets: []Concept{RequestsFinished}},
				{Dialect: "vllm", Gauges: map[Concept]float64{RequestsRunning: 1}},
			},
			want: Snapshot{Dialect: "vllm", Gauges: map[Concept]float64{RequestsRunning: 11, KVCacheUsage: 0.4},
				Counters: map[Concept]float64{RequestsFinished: 30}, Histograms: map[Concept]Histogram{TTFT: h(6, 30)},
				Resets: []Concept{RequestsFinished}},
		},
		{
			name:  "different dialects are mixed",
			snaps: []Snapshot{{Dialect: "vllm"}, {Dialect: "sglang"}},
			want:  Snapshot{Dialect: "mixed"},
		},
		{name: "none", want: Snapshot{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, Sum(tt.snaps...), cmpopts.EquateEmpty(), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("Sum (-want +got):\n%s", diff)
			}
		})
	}
}

// A histogram read back from a damaged scrapes.jsonl can have fewer counts
// than bounds: every operation must treat it as unknown, never index past it.
func TestDamagedHistogramsDoNotPanic(t *testing.T) {
	t.Parallel()
	good := Histogram{Bounds: []float64{0.1, 1}, Cumulative: []float64{1, 2}, Count: 2, Sum: 0.6}
	bad := Histogram{Bounds: []float64{0.1, 1}, Cumulative: []float64{1}, Count: 2, Sum: 0.6}
	snap := func(h Histogram) Snapshot { return Snapshot{Histograms: map[Concept]Histogram{TTFT: h}} }
	for _, tc := range []struct {
		name          string
		before, after Histogram
	}{
		{"damaged before", bad, good},
		{"damaged after", good, bad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := Delta(snap(tc.before), snap(tc.after))
			_ = d.Histograms[TTFT].Quantile(0.5)
			_ = Sum(snap(tc.before), snap(tc.after)).Histograms[TTFT].Quantile(0.9)
		})
	}
	if e := bad.Quantile(0.5); !math.IsNaN(e.Value) {
		t.Errorf("quantile of a damaged histogram = %v, want unknown (NaN)", e.Value)
	}
	if bad.Valid() || !good.Valid() {
		t.Error("Valid misjudges")
	}
}

// TestSumOfOneIsItself: the sum of one target's snapshot keeps its
// series' keys, so a delta from that target's own row to a poll summed by
// PollSource finds nothing reset. The keys were prefixed with "replica 1",
// every series of vLLM's labelled counters read as vanished, and every
// settle of a vLLM run stopped at its first poll saying the engine had
// restarted (.ci/busy-test run 13 met the restart it then missed).
func TestSumOfOneIsItself(t *testing.T) {
	s := Snapshot{Dialect: "vllm", Counters: map[Concept]float64{RequestsFinished: 5},
		Series: map[Concept]map[string]float64{RequestsFinished: {`finished_reason="length"`: 4, `finished_reason="stop"`: 1}}}
	sum := Sum(s)
	if !maps.Equal(sum.Series[RequestsFinished], s.Series[RequestsFinished]) {
		t.Errorf("series %v, want %v", sum.Series[RequestsFinished], s.Series[RequestsFinished])
	}
	if d := Delta(s, sum); len(d.Resets) != 0 || d.Counters[RequestsFinished] != 0 {
		t.Errorf("delta from a snapshot to its own sum: resets %v, finished %v; want none and 0", d.Resets, d.Counters[RequestsFinished])
	}
}
