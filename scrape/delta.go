package scrape

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"time"
)

// seriesReset is one series of a counter that went down.
type seriesReset struct {
	series        string // its labels; "" for the whole counter
	before, after float64
}

// counterIncrease is after − before of counter c, which after has. When
// both snapshots keep c's series, it is taken series by series: one that
// went down was reset and counts from 0 (its after value), one that is new
// counts whole, one that vanished is a reset that adds nothing. Otherwise
// the totals are differenced the same way. A counter missing from before
// is taken whole (it appeared with its first request).
func counterIncrease(c Concept, before, after Snapshot) (inc float64, resets []seriesReset) {
	v := after.Counters[c]
	b, ok := before.Counters[c]
	if !ok {
		return v, nil
	}
	bs, as := before.Series[c], after.Series[c]
	if len(bs) == 0 || len(as) == 0 {
		if v < b {
			return v, []seriesReset{{before: b, after: v}}
		}
		return v - b, nil
	}
	for _, k := range slices.Sorted(maps.Keys(as)) {
		x := as[k]
		y, had := bs[k]
		switch {
		case !had:
			inc += x
		case x < y:
			inc += x
			resets = append(resets, seriesReset{series: k, before: y, after: x})
		default:
			inc += x - y
		}
	}
	for _, k := range slices.Sorted(maps.Keys(bs)) {
		if _, still := as[k]; !still {
			resets = append(resets, seriesReset{series: k, before: bs[k]})
		}
	}
	return inc, resets
}

// Delta is what happened between two snapshots of one target: counters and
// histograms are after − before, gauges are after's values. A counter or a
// histogram that went down (any bucket, the count or the sum) was reset, by
// a restart or a vanished replica: its delta is after's value alone, and the
// concept is listed in Resets so a report can say the window is partial.
// A counter whose series both snapshots keep is differenced series by
// series, so one series' reset is found and counted from 0 alone (see
// counterIncrease). A
// histogram whose buckets changed is a reset too. A concept missing from
// before is taken whole from after (it appeared with its first request); one
// missing from after is absent from the delta. Snapshots of two different
// dialects are two engines (a DialectChange): nothing is differenced across
// them, and the delta is after's gauges with every counter and histogram at
// zero, as over no time.
func Delta(before, after Snapshot) Snapshot {
	if dialectsDiffer(&before, &after) {
		before = after
	}
	d := Snapshot{
		Dialect:    after.Dialect,
		Gauges:     make(map[Concept]float64, len(after.Gauges)),
		Counters:   make(map[Concept]float64, len(after.Counters)),
		Histograms: make(map[Concept]Histogram, len(after.Histograms)),
	}
	for c, v := range after.Gauges {
		d.Gauges[c] = v
	}
	for c := range after.Counters {
		inc, resets := counterIncrease(c, before, after)
		d.Counters[c] = inc
		if len(resets) > 0 {
			d.Resets = append(d.Resets, c)
		}
	}
	for c, h := range after.Histograms {
		b, ok := before.Histograms[c]
		if !ok {
			d.Histograms[c] = h.clone()
			continue
		}
		diff, reset := h.minus(b)
		d.Histograms[c] = diff
		if reset {
			d.Resets = append(d.Resets, c)
		}
	}
	sort.Slice(d.Resets, func(i, j int) bool { return conceptOrder(d.Resets[i]) < conceptOrder(d.Resets[j]) })
	for c, why := range before.Invalid {
		if c.Kind() != KindGauge {
			d.invalidate(c, "before: "+why)
		}
	}
	for c, why := range after.Invalid {
		d.invalidate(c, why)
	}
	return d
}

// minus returns h − b, or h itself and true when b cannot be its past.
func (h Histogram) minus(b Histogram) (Histogram, bool) {
	if !sameBounds(h, b) || h.Count < b.Count || h.Sum < b.Sum {
		return h.clone(), true
	}
	out := Histogram{Bounds: append([]float64(nil), h.Bounds...), Cumulative: make([]float64, len(h.Cumulative)),
		Count: h.Count - b.Count, Sum: h.Sum - b.Sum}
	for i := range h.Cumulative {
		if h.Cumulative[i] < b.Cumulative[i] {
			return h.clone(), true
		}
		out.Cumulative[i] = h.Cumulative[i] - b.Cumulative[i]
	}
	return out, false
}

// Sum combines snapshots of several replicas of one service into one:
// counters, histograms and count-like gauges add up; fraction gauges
// (kv_cache_usage, prefix_cache_hit) average over the replicas that report
// them. A concept is present when any replica has it. Resets are united. The
// dialect is the replicas' common one, or "mixed".
func Sum(snaps ...Snapshot) Snapshot {
	out := Snapshot{Gauges: map[Concept]float64{}, Counters: map[Concept]float64{}, Histograms: map[Concept]Histogram{}}
	fracN := map[Concept]int{}
	resets := map[Concept]bool{}
	for i, s := range snaps {
		switch {
		case i == 0:
			out.Dialect = s.Dialect
		case s.Dialect != out.Dialect:
			out.Dialect = "mixed"
		}
		for c, v := range s.Gauges {
			out.Gauges[c] += v
			if c.Fraction() {
				fracN[c]++
			}
		}
		for c, v := range s.Counters {
			out.Counters[c] += v
		}
		for c, h := range s.Histograms {
			if old, ok := out.Histograms[c]; ok {
				out.Histograms[c] = old.merge(h)
			} else {
				out.Histograms[c] = h.clone()
			}
		}
		for _, c := range s.Resets {
			resets[c] = true
		}
	}
	for c, n := range fracN {
		out.Gauges[c] /= float64(n)
	}
	// Finite values from each replica can still add up beyond float64 (two
	// gauges of 1e308): the sum is unknown, never +Inf, which no summary
	// could encode.
	for _, m := range []map[Concept]float64{out.Gauges, out.Counters} {
		for _, c := range sortedKeys(m) {
			if v := m[c]; math.IsInf(v, 0) || math.IsNaN(v) {
				out.invalidate(c, fmt.Sprintf("the %d replicas' values add up beyond the largest float64", len(snaps)))
			}
		}
	}
	for _, c := range sortedKeys(out.Histograms) {
		h := out.Histograms[c]
		overflow := math.IsInf(h.Count, 0) || math.IsInf(h.Sum, 0)
		for _, v := range h.Cumulative {
			overflow = overflow || math.IsInf(v, 0)
		}
		if overflow {
			out.invalidate(c, fmt.Sprintf("the %d replicas' histograms add up beyond the largest float64", len(snaps)))
		}
	}
	// Per-series values of every replica, when any replica keeps its own,
	// so a reset of one of those series is still found in the sum. (Replicas
	// of one series each are differenced by their total, as before: scrape
	// each target's rows apart, with Increase, to find one replica's reset.)
	for c := range out.Counters {
		many := false
		for _, s := range snaps {
			many = many || len(s.Series[c]) > 0
		}
		if !many {
			continue
		}
		series := map[string]float64{}
		for i, s := range snaps {
			v, ok := s.Counters[c]
			if !ok {
				continue
			}
			if len(snaps) == 1 {
				// One snapshot's sum is itself, its series' keys
				// included: a settle poll (PollSource) is compared with
				// a phase's opening row of one target, whose keys are
				// the engine's, and prefixed keys read as every series
				// vanished, a reset on every poll of vLLM's labelled
				// counters (the settle then never waited).
				maps.Copy(series, s.Series[c])
				continue
			}
			prefix := fmt.Sprintf("replica %d", i+1)
			if len(s.Series[c]) == 0 {
				series[prefix] = v
				continue
			}
			for k, x := range s.Series[c] {
				series[prefix+" "+k] = x
			}
		}
		if out.Series == nil {
			out.Series = map[Concept]map[string]float64{}
		}
		out.Series[c] = series
	}
	// A concept one replica exposes but cannot be read makes the total
	// unknown: without it, the rest would be shown as the whole.
	for i, s := range snaps {
		for _, c := range sortedKeys(s.Invalid) {
			out.invalidate(c, fmt.Sprintf("replica %d of %d: %s", i+1, len(snaps), s.Invalid[c]))
		}
	}
	for c := range resets {
		out.Resets = append(out.Resets, c)
	}
	sort.Slice(out.Resets, func(i, j int) bool { return conceptOrder(out.Resets[i]) < conceptOrder(out.Resets[j]) })
	return out
}

func sortedKeys[V any](m map[Concept]V) []Concept {
	ks := make([]Concept, 0, len(m))
	for c := range m {
		ks = append(ks, c)
	}
	sort.Slice(ks, func(i, j int) bool { return conceptOrder(ks[i]) < conceptOrder(ks[j]) })
	return ks
}

// Reset is one counter or histogram going down between two consecutive
// scrapes of one target: the engine restarted (or a replica behind one
// address was replaced) between them.
type Reset struct {
	Concept Concept       `json:"concept"`
	Target  string        `json:"target,omitempty"`
	At      time.Duration `json:"at_ns"`            // run clock of the first scrape that saw the lower value
	Wall    time.Time     `json:"wall,omitempty"`   // its wall-clock time
	Series  string        `json:"series,omitempty"` // the series' labels, when one of several reset ("" = the whole counter)
	Before  float64       `json:"before"`           // the value (a histogram's count) at the scrape before
	After   float64       `json:"after"`            // and at that scrape (0 for a series that vanished)
}

// Increase is the delta over a chain of scrapes of one target, taken the
// way Prometheus's increase() takes it: each scrape is differenced from the
// one before it, and a counter or histogram that went down counts from 0
// after the reset, so what the engine counted before a restart is kept (a
// plain Delta of the two ends keeps only what came after). Every reset is
// returned, with when it was seen; the concepts are also in Resets.
//
// rows are one target's scrapes in time order (failed ones are skipped).
// With two rows the result is Delta's. A concept counts from the first
// scrape that has it; one the last scrape lacks is absent, and one the first
// or the last scrape holds as Invalid is absent with that reason, as in
// Delta. A scrape in between that lacks a concept (or holds it invalid) is
// skipped for it, as increase() skips a missing sample.
func Increase(rows []Row) (Snapshot, []Reset) {
	var chain []Row
	for _, r := range rows {
		if r.OK && r.Snapshot != nil {
			chain = append(chain, r)
		}
	}
	if len(chain) == 0 {
		return Snapshot{}, nil
	}
	if len(chain) == 1 {
		return Delta(*chain[0].Snapshot, *chain[0].Snapshot), nil
	}
	// Never across a change of engine (DialectChanges): only the scrapes
	// since the last change count, the first of them as the base.
	if ch := DialectChanges(chain); len(ch) > 0 {
		at := ch[len(ch)-1].At
		for i, r := range chain {
			if r.At == at {
				return Increase(chain[i:])
			}
		}
	}
	first, last := chain[0].Snapshot, chain[len(chain)-1].Snapshot
	d := Delta(*first, *last) // gauges, dialect, invalid concepts; counters and histograms are redone below
	var resets []Reset
	resetAt := func(c Concept, r Row, before, after float64) {
		resets = append(resets, Reset{Concept: c, Target: r.Target, At: r.At, Wall: r.Wall, Before: before, After: after})
	}
	for c := range d.Counters {
		var total float64
		var prev *Snapshot // the last scrape that had c
		for i, r := range chain {
			if _, ok := r.Snapshot.Counters[c]; !ok {
				continue
			}
			if prev != nil || i > 0 {
				// The first scrape with c inside the chain counts whole.
				from := Snapshot{}
				if prev != nil {
					from = *prev
				}
				inc, rs := counterIncrease(c, from, *r.Snapshot)
				total += inc
				for _, x := range rs {
					resets = append(resets, Reset{Concept: c, Target: r.Target, At: r.At, Wall: r.Wall, Series: x.series, Before: x.before, After: x.after})
				}
			}
			prev = r.Snapshot
		}
		d.Counters[c] = total
	}
	for c := range d.Histograms {
		var total, prev Histogram
		seen, started := false, false
		add := func(h Histogram) {
			if started {
				total = total.merge(h)
			} else {
				total, started = h.clone(), true
			}
		}
		for i, r := range chain {
			h, ok := r.Snapshot.Histograms[c]
			if !ok || !h.Valid() {
				continue
			}
			switch {
			case !seen:
				if i > 0 {
					add(h)
				}
			default:
				diff, reset := h.minus(prev)
				if reset {
					resetAt(c, r, prev.Count, h.Count)
				}
				add(diff)
			}
			prev, seen = h, true
		}
		if !started {
			total = Histogram{Bounds: append([]float64(nil), last.Histograms[c].Bounds...), Cumulative: make([]float64, len(last.Histograms[c].Cumulative))}
		}
		d.Histograms[c] = total
	}
	d.Resets = nil
	for _, r := range resets {
		if !slices.Contains(d.Resets, r.Concept) {
			d.Resets = append(d.Resets, r.Concept)
		}
	}
	sort.Slice(d.Resets, func(i, j int) bool { return conceptOrder(d.Resets[i]) < conceptOrder(d.Resets[j]) })
	sort.SliceStable(resets, func(i, j int) bool {
		if resets[i].At != resets[j].At {
			return resets[i].At < resets[j].At
		}
		return conceptOrder(resets[i].Concept) < conceptOrder(resets[j].Concept)
	})
	return d, resets
}
