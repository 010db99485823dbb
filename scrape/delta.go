package scrape

import (
	"fmt"
	"sort"
)

// Delta is what happened between two snapshots of one target: counters and
// histograms are after − before, gauges are after's values. A counter or a
// histogram that went down (any bucket, the count or the sum) was reset, by
// a restart or a vanished replica: its delta is after's value alone, and the
// concept is listed in Resets so a report can say the window is partial. A
// histogram whose buckets changed is a reset too. A concept missing from
// before is taken whole from after (it appeared with its first request); one
// missing from after is absent from the delta.
func Delta(before, after Snapshot) Snapshot {
	d := Snapshot{
		Dialect:    after.Dialect,
		Gauges:     make(map[Concept]float64, len(after.Gauges)),
		Counters:   make(map[Concept]float64, len(after.Counters)),
		Histograms: make(map[Concept]Histogram, len(after.Histograms)),
	}
	for c, v := range after.Gauges {
		d.Gauges[c] = v
	}
	for c, v := range after.Counters {
		b, ok := before.Counters[c]
		switch {
		case !ok:
			d.Counters[c] = v
		case v < b:
			d.Counters[c] = v
			d.Resets = append(d.Resets, c)
		default:
			d.Counters[c] = v - b
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
