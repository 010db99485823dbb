package scrape

import (
	"sort"
	"time"
)

// Cadence is how often an engine actually refreshes a gauge, measured from a
// target's scrapes. SGLang writes its scheduler gauges only at prefill
// batches and every 40th decode step, so a 1 s scrape often re-reads an old
// value; a report must say so rather than treat the value as live.
//
// Only busy intervals count: two consecutive successful scrapes between
// which the engine was working (see MeasureCadence). A gauge that changed in k of them was
// updated at least k times, and, when it updates more slowly than we scrape,
// about k times; so Interval = busy time / k. When it changed in every busy
// interval it updates at least as often as we scrape and Interval is only an
// upper bound (AtMostScrape).
type Cadence struct {
	Concept      Concept       `json:"concept"`
	Busy         int           `json:"busy_intervals"`
	Changes      int           `json:"changes"`
	BusyTime     time.Duration `json:"busy_ns"`
	Interval     time.Duration `json:"interval_ns,omitempty"` // 0 when no change was seen
	AtMostScrape bool          `json:"at_most_scrape,omitempty"`
	// StepsPerUpdate estimates the decode steps between updates: the
	// generated tokens of the busy intervals divided by the running
	// requests (one token per running request per step), over Changes.
	// About 40 for SGLang's default decode-log interval (prefill batches
	// add updates, so it reads lower under steady arrivals). 0 when unknown.
	StepsPerUpdate float64 `json:"steps_per_update,omitempty"`
	// FrozenIdle: the engine generated nothing between two scrapes and the
	// gauge still read non-zero, the same value at both: a value that stayed
	// behind when traffic stopped (a requests gauge should be 0 then).
	FrozenIdle bool `json:"frozen_idle,omitempty"`
}

// Activity says what the engine did between two run-clock offsets as the
// client saw it: whether it had requests in flight, and how many tokens
// it streamed.
type Activity func(from, to time.Duration) (busy bool, tokens float64)

// MeasureCadence measures one gauge over one target's rows (any order; the
// failed ones and those without the gauge are skipped). act says when the
// engine was working and how many tokens it made; the client knows best.
// With nil, an interval is busy when the generation-token counter grew, and
// its tokens are that growth: exact for engines that count tokens every step
// (vLLM, FastDeploy), not for SGLang, which counts a request's tokens when
// it finishes. A gauge that moves in coarse steps changes less often than it
// is written (vLLM's kv_cache_usage moves one 16-token block at a time), so
// its cadence is an upper bound on the engine's refresh interval. A gauge that never
// changes while busy, such as the running count of a closed loop at full
// concurrency, gives Changes 0 and says nothing about its cadence: measure a
// gauge that moves, like kv_cache_usage or gen_throughput.
func MeasureCadence(rows []Row, c Concept, act Activity) Cadence {
	type point struct {
		at              time.Duration
		v, gen, running float64
		hasGen, hasRun  bool
	}
	var pts []point
	for _, r := range rows {
		if !r.OK || r.Snapshot == nil {
			continue
		}
		v, ok := r.Snapshot.Gauges[c]
		if !ok {
			continue
		}
		p := point{at: r.At, v: v}
		p.gen, p.hasGen = r.Snapshot.Counters[GenerationTokens]
		p.running, p.hasRun = r.Snapshot.Gauges[RequestsRunning]
		pts = append(pts, p)
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].at < pts[j].at })

	out := Cadence{Concept: c}
	steps, stepsKnown := 0.0, true
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		working, tokens := a.hasGen && b.hasGen && b.gen > a.gen, b.gen-a.gen
		if act != nil {
			working, tokens = act(a.at, b.at)
		} else if !a.hasGen || !b.hasGen || b.gen < a.gen {
			continue // no token counter, or a reset: busy or not is unknown
		}
		if !working {
			if a.v == b.v && b.v != 0 {
				out.FrozenIdle = true
			}
			continue
		}
		out.Busy++
		out.BusyTime += b.at - a.at
		if a.v != b.v {
			out.Changes++
		}
		running := (a.running + b.running) / 2
		if !a.hasRun || !b.hasRun || running <= 0 || tokens < 0 {
			stepsKnown = false
			continue
		}
		steps += tokens / running
	}
	if out.Changes > 0 {
		out.Interval = out.BusyTime / time.Duration(out.Changes)
		out.AtMostScrape = out.Changes == out.Busy
		if stepsKnown {
			out.StepsPerUpdate = steps / float64(out.Changes)
		}
	}
	return out
}

// MeasureCadences measures every gauge that appears in rows.
func MeasureCadences(rows []Row, act Activity) map[Concept]Cadence {
	seen := map[Concept]bool{}
	for _, r := range rows {
		if r.OK && r.Snapshot != nil {
			for c := range r.Snapshot.Gauges {
				seen[c] = true
			}
		}
	}
	out := make(map[Concept]Cadence, len(seen))
	for c := range seen {
		out[c] = MeasureCadence(rows, c, act)
	}
	return out
}
