package report

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// A gauge an engine reports near the largest float64 is summarised without
// overflowing: its mean over the phase is the value, and the summary
// encodes (a sum of two 1.7e308 is +Inf, which JSON cannot hold).
func TestGaugeStatsOfHugeValues(t *testing.T) {
	t.Parallel()
	phases := []rundir.PhaseMeta{{Name: "main", Measured: true, Start: 0, End: 10 * time.Second}}
	var rows []scrape.Row
	for i, v := range []float64{1.7e308, 1.7e308, 1.5e308} {
		rows = append(rows, scrape.Row{At: time.Duration(i+1) * time.Second, OK: true,
			Snapshot: &scrape.Snapshot{Gauges: map[scrape.Concept]float64{scrape.RequestsRunning: v}}})
	}
	got := gaugeStats(phases, rows)[string(scrape.RequestsRunning)]
	if want := 1.7e308/3*2 + 1.5e308/3; math.Abs(got.Mean-want) > 1e-12*want || got.Max != 1.7e308 || got.N != 3 {
		t.Errorf("gauge stats %+v, want mean %v, max 1.7e308, n 3", got, want)
	}
	if _, err := json.Marshal(got); err != nil {
		t.Errorf("does not encode: %v", err)
	}
}
