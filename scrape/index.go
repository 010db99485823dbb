package scrape

import (
	"math"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// familyIndex finds metric families by exposed name, with the `_created`
// series of Python's prometheus_client left out and gateway prefixes
// rewritten to the engine's own.
type familyIndex map[string]*dto.MetricFamily

func newFamilyIndex(fams []*dto.MetricFamily, aliases map[string]string) familyIndex {
	ix := make(familyIndex, len(fams))
	for _, f := range fams {
		name := f.GetName()
		if strings.HasSuffix(name, "_created") {
			continue // creation timestamps, not values (engine-metrics.md, exposition facts)
		}
		for from, to := range aliases {
			if strings.HasPrefix(name, from) {
				name = to + strings.TrimPrefix(name, from)
				break
			}
		}
		if _, dup := ix[name]; dup && name != f.GetName() {
			continue // the engine's own name wins over a gateway's copy
		}
		ix[name] = f
	}
	return ix
}

// has reports whether a family of that name is present.
func (ix familyIndex) has(name string) bool { _, ok := ix[name]; return ok }

// scalar aggregates the series of a counter, gauge or untyped family that
// match the labels: mirrors collapse to their largest value, then the groups
// add up (or average, for fractions). Non-finite values are skipped, so a
// NaN gauge reads as absent.
func (ix familyIndex) scalar(name string, sel selector, mirrors []string, mean bool) (float64, bool) {
	f, ok := ix[name]
	if !ok {
		return 0, false
	}
	groups := map[string]float64{}
	for _, m := range f.GetMetric() {
		v, ok := scalarValue(m)
		if !ok || !sel.keeps(m) || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		key := groupKey(m, mirrors)
		if old, seen := groups[key]; !seen || v > old {
			groups[key] = v
		}
	}
	if len(groups) == 0 {
		return 0, false
	}
	total := 0.0
	for _, v := range groups {
		total += v
	}
	if mean {
		total /= float64(len(groups))
	}
	return total, true
}

func scalarValue(m *dto.Metric) (float64, bool) {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue(), m.Counter.Value != nil
	case m.Gauge != nil:
		return m.Gauge.GetValue(), m.Gauge.Value != nil
	case m.Untyped != nil:
		return m.Untyped.GetValue(), m.Untyped.Value != nil
	}
	return 0, false
}

// histogram merges the series of a histogram family that match the labels:
// mirrors collapse to the series with the largest count, then the groups
// merge (see Histogram.merge).
func (ix familyIndex) histogram(name string, sel selector, mirrors []string) (Histogram, bool) {
	f, ok := ix[name]
	if !ok {
		return Histogram{}, false
	}
	groups := map[string]Histogram{}
	for _, m := range f.GetMetric() {
		if m.Histogram == nil || !sel.keeps(m) {
			continue
		}
		h, ok := fromDTO(m.Histogram)
		if !ok {
			continue
		}
		key := groupKey(m, mirrors)
		if old, seen := groups[key]; !seen || h.Count > old.Count {
			groups[key] = h
		}
	}
	if len(groups) == 0 {
		return Histogram{}, false
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a fixed merge order keeps float sums reproducible
	out := groups[keys[0]].clone()
	for _, k := range keys[1:] {
		out = out.merge(groups[k])
	}
	return out, true
}

// fromDTO converts a classic histogram; ok is false when a value is not
// finite (a NaN sum) so the concept reads as absent rather than poisoning
// every later computation.
func fromDTO(d *dto.Histogram) (Histogram, bool) {
	h := Histogram{Sum: d.GetSampleSum()}
	h.Count = float64(d.GetSampleCount())
	if d.SampleCountFloat != nil {
		h.Count = d.GetSampleCountFloat()
	}
	buckets := append([]*dto.Bucket(nil), d.GetBucket()...)
	sort.SliceStable(buckets, func(i, j int) bool { return buckets[i].GetUpperBound() < buckets[j].GetUpperBound() })
	for _, b := range buckets {
		c := float64(b.GetCumulativeCount())
		if b.CumulativeCountFloat != nil {
			c = b.GetCumulativeCountFloat()
		}
		ub := b.GetUpperBound()
		if math.IsNaN(c) || math.IsInf(c, 0) || math.IsNaN(ub) {
			return Histogram{}, false
		}
		if math.IsInf(ub, -1) {
			continue // nothing is at or below -Inf
		}
		if math.IsInf(ub, +1) {
			h.Count = math.Max(h.Count, c)
			continue
		}
		if n := len(h.Bounds); n > 0 && h.Bounds[n-1] == ub {
			continue // a repeated bound adds nothing
		}
		h.Bounds = append(h.Bounds, ub)
		h.Cumulative = append(h.Cumulative, c)
	}
	if n := len(h.Cumulative); n > 0 {
		h.Count = math.Max(h.Count, h.Cumulative[n-1])
	}
	if math.IsNaN(h.Sum) || math.IsInf(h.Sum, 0) || math.IsNaN(h.Count) || math.IsInf(h.Count, 0) {
		return Histogram{}, false
	}
	return h, true
}

// selector picks the series of a family a concept reads.
type selector struct {
	match   map[string]string   // the label must have this value
	exclude map[string][]string // the label must not have any of these values
}

func (sel selector) keeps(m *dto.Metric) bool {
	for name, want := range sel.match {
		if v, ok := labelValue(m, name); !ok || v != want {
			return false
		}
	}
	for name, unwanted := range sel.exclude {
		v, _ := labelValue(m, name)
		for _, u := range unwanted {
			if v == u {
				return false
			}
		}
	}
	return true
}

func labelValue(m *dto.Metric, name string) (string, bool) {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue(), true
		}
	}
	return "", false
}

// groupKey is the series' label set without the mirror labels, in a
// canonical order.
func groupKey(m *dto.Metric, mirrors []string) string {
	pairs := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		mirror := false
		for _, x := range mirrors {
			if l.GetName() == x {
				mirror = true
				break
			}
		}
		if !mirror {
			pairs = append(pairs, l.GetName()+"\xff"+l.GetValue())
		}
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "\xfe")
}
