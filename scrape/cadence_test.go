package scrape

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// simulatedRows scrapes, once a second, an engine that runs 10 requests at
// one decode step per 50 ms for busyFor seconds, then idles for 3 s. Its
// kv_cache_usage gauge is written every `every` decode steps and keeps its
// last value once idle (as SGLang's does); gen_throughput never changes.
func simulatedRows(busyFor, every int) []Row {
	var rows []Row
	for k := 0; k <= busyFor+3; k++ {
		steps := 20 * min(k, busyFor)
		s := &Snapshot{
			Gauges: map[Concept]float64{
				RequestsRunning: 10,
				KVCacheUsage:    0.1 + 0.01*float64(steps/every),
				GenThroughput:   200,
			},
			Counters: map[Concept]float64{GenerationTokens: float64(10 * steps)},
		}
		rows = append(rows, Row{At: time.Duration(k) * time.Second, OK: true, Snapshot: s})
	}
	rows = append(rows, Row{At: 1500 * time.Millisecond, OK: false}) // a failed scrape is skipped
	return rows
}

func TestMeasureCadence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		rows    []Row
		concept Concept
		act     Activity
		want    Cadence
	}{
		{
			name: "every 40 steps (SGLang): every other scrape sees a change", rows: simulatedRows(20, 40), concept: KVCacheUsage,
			want: Cadence{Concept: KVCacheUsage, Busy: 20, Changes: 10, BusyTime: 20 * time.Second, Interval: 2 * time.Second,
				StepsPerUpdate: 40, FrozenIdle: true},
		},
		{
			name: "every step (vLLM): faster than the scrapes, an upper bound", rows: simulatedRows(20, 1), concept: KVCacheUsage,
			want: Cadence{Concept: KVCacheUsage, Busy: 20, Changes: 20, BusyTime: 20 * time.Second, Interval: time.Second,
				AtMostScrape: true, StepsPerUpdate: 20, FrozenIdle: true},
		},
		{
			name: "a gauge that never moves says nothing", rows: simulatedRows(20, 40), concept: GenThroughput,
			want: Cadence{Concept: GenThroughput, Busy: 20, BusyTime: 20 * time.Second, FrozenIdle: true},
		},
		{
			name: "the client says when the engine was busy", rows: simulatedRows(20, 40), concept: KVCacheUsage,
			act: func(from, to time.Duration) (bool, float64) { return to <= 10*time.Second, 200 },
			want: Cadence{Concept: KVCacheUsage, Busy: 10, Changes: 5, BusyTime: 10 * time.Second, Interval: 2 * time.Second,
				StepsPerUpdate: 40, FrozenIdle: true},
		},
		{
			name: "absent gauge", rows: simulatedRows(5, 40), concept: BatchSize,
			want: Cadence{Concept: BatchSize},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := MeasureCadence(tt.rows, tt.concept, tt.act)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("MeasureCadence (-want +got):\n%s", diff)
			}
		})
	}
	all := MeasureCadences(simulatedRows(20, 40), nil)
	if len(all) != 3 || all[KVCacheUsage].Changes != 10 || math.IsNaN(all[RequestsRunning].StepsPerUpdate) {
		t.Errorf("MeasureCadences = %+v", all)
	}
}
