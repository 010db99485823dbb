// Package saturation finds where a sweep stopped scaling: the point past which
// throughput no longer follows the offered load while latency or the queue grows.
package saturation

import (
	"fmt"
	"math"
	"slices"
)

// Point is one sweep phase's outcome as the report measured it.
type Point struct {
	Phase string
	// Load is the offered load: the open-loop rate (requests/s) or the
	// closed-loop users. Points are compared in increasing Load.
	Load float64
	// Throughput is what the engine achieved, in one unit for every point
	// (successful requests/s, or output tokens/s).
	Throughput float64
	// Latency grows when requests queue: TTFT p50 or mean, in seconds.
	Latency float64
	// Queue is the mean number of requests waiting at the server during the
	// phase; NaN when the engine does not say.
	Queue float64
}

// Result is where a sweep stopped scaling.
type Result struct {
	Found bool `json:"found"`
	// Knee is the last point (index into the points in increasing Load)
	// whose throughput still followed the load; Phase and Load are its.
	Knee  int     `json:"knee"`
	Phase string  `json:"phase"`
	Load  float64 `json:"load"`
	// Capacity is the highest throughput from the knee on: the engine's
	// capacity as the sweep measured it.
	Capacity float64 `json:"capacity"`
	Reason   string  `json:"reason"`
}

// Thresholds of Detect.
const (
	// Below this fraction of proportional growth, throughput has stopped rising.
	saturatedEfficiency = 0.5
	// Above this ratio between consecutive points, latency is growing.
	latencyGrowth = 1.25
	// A mean queue this much longer than at the previous point is growing.
	queueGrowth = 0.5
)

// Detect finds the first point where throughput stops rising with
// the load while latency or the server's queue keeps growing.
//
// Between consecutive points (in increasing load) the efficiency is the
// throughput's rise divided by the rise that proportional scaling would give
// (T₋·(L/L₋ − 1)): about 1 below capacity, about 0 above it. The sweep is
// saturated at the first point whose efficiency is below 0.5 while its
// latency grew by more than 25 % or its mean queue by more than half a
// request. The knee is the point before it.
func Detect(points []Point) Result {
	pts := slices.Clone(points)
	slices.SortStableFunc(pts, func(a, b Point) int {
		switch {
		case a.Load < b.Load:
			return -1
		case a.Load > b.Load:
			return 1
		}
		return 0
	})
	for i := 1; i < len(pts); i++ {
		prev, cur := pts[i-1], pts[i]
		if prev.Load <= 0 || prev.Throughput <= 0 || cur.Load <= prev.Load {
			continue
		}
		expected := prev.Throughput * (cur.Load/prev.Load - 1)
		eff := (cur.Throughput - prev.Throughput) / expected
		latencyUp := prev.Latency > 0 && cur.Latency > prev.Latency*latencyGrowth
		queueUp := !math.IsNaN(prev.Queue) && !math.IsNaN(cur.Queue) && cur.Queue > prev.Queue+queueGrowth
		if eff >= saturatedEfficiency || (!latencyUp && !queueUp) {
			continue
		}
		capacity := 0.0
		for _, p := range pts[i-1:] {
			capacity = max(capacity, p.Throughput)
		}
		grew := fmt.Sprintf("latency %.3gs → %.3gs", prev.Latency, cur.Latency)
		if !latencyUp {
			grew = fmt.Sprintf("queue %.3g → %.3g", prev.Queue, cur.Queue)
		}
		return Result{
			Found: true, Knee: i - 1, Phase: prev.Phase, Load: prev.Load, Capacity: capacity,
			Reason: fmt.Sprintf("from load %g to %g throughput went %.4g → %.4g, %.0f%% of the rise proportional to the load, while %s",
				prev.Load, cur.Load, prev.Throughput, cur.Throughput, eff*100, grew),
		}
	}
	return Result{Reason: "throughput kept rising with the load: no saturation within the sweep"}
}
