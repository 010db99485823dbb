package html

import (
	"fmt"
	"slices"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/latencytable"
)

// headlineOf is the figures the page's first section shows beside the
// verdict (decision 0801). A plain run's are its overview tiles. A sweep's
// pooled figures mix every load (decision 0039), so its headline is the
// capacity and the figures of one load: the knee, or without one the point
// that achieved the most.
func headlineOf(s report.Summary, pooled []tile) []tile {
	sw := s.Sweep
	if sw == nil || len(sw.Points) == 0 {
		return pooled
	}
	at := slices.IndexFunc(sw.Points, func(p report.SweepPoint) bool { return sw.Saturation.Found && p.Phase == sw.Saturation.Phase })
	capacity := tile{Label: "capacity", Value: num(sw.Saturation.Capacity), Unit: "req/s",
		Sub: fmt.Sprintf("the knee: %s, offered %s", sw.Saturation.Phase, num(sw.Saturation.Load))}
	if at < 0 {
		at = 0
		for i, p := range sw.Points {
			if p.RequestsPerS > sw.Points[at].RequestsPerS {
				at = i
			}
		}
		capacity = tile{Label: "saturation", Value: "not reached", Sub: "the most achieved: " + sw.Points[at].Phase}
	}
	p := sw.Points[at]
	where := "at " + p.Phase
	tiles := []tile{capacity,
		{Label: "throughput", Value: num(p.RequestsPerS), Unit: "req/s", Sub: fmt.Sprintf("%s, offered %s %s", where, num(p.Load), p.LoadUnit)},
		{Label: "output tokens", Value: num(p.OutputTokPerS), Unit: "tok/s", Sub: where},
		pointLatencyTile("TTFT", p, "ttft", p.TTFTp50, p.TTFTp99),
		pointLatencyTile("ITL", p, "itl", p.ITLp50, p.ITLp99),
		pointLatencyTile("E2E", p, "e2e", p.E2Ep50, p.E2Ep99),
	}
	if i := slices.IndexFunc(s.Phases, func(ph report.PhaseResult) bool { return ph.Name == p.Phase }); i >= 0 {
		e := errorTile(s.Phases[i].Client.Requests)
		e.Sub += " · " + where
		tiles = append(tiles, e)
	}
	return tiles
}

// pointLatencyTile is a sweep point's latency as latencyTile draws a
// run's: the p50 with its interval, the p99 with its, and the samples.
func pointLatencyTile(name string, p report.SweepPoint, key string, p50, p99 float64) tile {
	a, b := pointFigure(p, key, 50, p50), pointFigure(p, key, 99, p99)
	t := tile{Label: name + " p50", Value: a.V, Unit: "ms", Sub: "p99 " + b.V + " ms"}
	if a.TooFew {
		t.Value += latencytable.TooFewMark
	}
	if b.TooFew {
		t.Sub = "p99 " + b.V + latencytable.TooFewMark + " ms"
	}
	if a.CI != "" {
		t.Sub = "(" + a.CI + ") · " + t.Sub
	}
	if b.CI != "" {
		t.Sub += " (" + b.CI + ")"
	}
	t.Sub += " · n " + count(p.N[key]) + " · at " + p.Phase
	return t
}
