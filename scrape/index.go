package scrape

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/llmbench-org/llmbench/endpoints"
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
// add up (or average, for fractions). A family with an unusable series
// (see read) reads as absent.
func (ix familyIndex) scalar(name string, sel selector, mirrors []string, mean bool) (float64, bool) {
	v, _, ok, invalid := ix.read(name, sel, mirrors, mean, false)
	return v, ok && invalid == ""
}

// read is scalar that says why a present family cannot be used: one
// matching series that is NaN or ±Inf, or negative when counter is true,
// makes the whole concept invalid (invalid names the series), because a
// total without it would be shown as the whole. series holds the value of
// each series (after mirrors collapse) when there are several, keyed by
// their labels (a="b",c="d"), so a counter reset can be found per series.
func (ix familyIndex) read(name string, sel selector, mirrors []string, mean, counter bool) (total float64, series map[string]float64, ok bool, invalid string) {
	f, ok := ix[name]
	if !ok {
		return 0, nil, false, ""
	}
	groups := map[string]float64{}
	for _, m := range f.GetMetric() {
		v, ok := scalarValue(m)
		if !ok || !sel.keeps(m) {
			continue
		}
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			return 0, nil, false, fmt.Sprintf("%s is %v", seriesLabel(name, m), v)
		case counter && v < 0:
			return 0, nil, false, fmt.Sprintf("%s is %v: a counter cannot be negative", seriesLabel(name, m), v)
		}
		key := groupKey(m, mirrors)
		if old, seen := groups[key]; !seen || v > old {
			groups[key] = v
		}
	}
	if len(groups) == 0 {
		return 0, nil, false, ""
	}
	for _, v := range groups {
		total += v
	}
	if mean {
		total /= float64(len(groups))
	}
	if math.IsInf(total, 0) {
		// Finite series whose sum overflows: the total is unknown, not +Inf.
		return 0, nil, false, fmt.Sprintf("%s: its %d series add up beyond the largest float64", name, len(groups))
	}
	if len(groups) > 1 {
		series = make(map[string]float64, len(groups))
		for k, v := range groups {
			series[readableKey(k)] = v
		}
	}
	return total, series, true, ""
}

// readableKey turns a groupKey into a="b",c="d".
func readableKey(k string) string {
	if k == "" {
		return ""
	}
	pairs := strings.Split(k, "\xfe")
	for i, p := range pairs {
		name, value, _ := strings.Cut(p, "\xff")
		pairs[i] = name + "=" + strconv.Quote(value)
	}
	return strings.Join(pairs, ",")
}

// seriesLabel names one series for a reason: name{a="b",…}.
func seriesLabel(name string, m *dto.Metric) string {
	if len(m.GetLabel()) == 0 {
		return name
	}
	parts := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+strconv.Quote(l.GetValue()))
	}
	return name + "{" + strings.Join(parts, ",") + "}"
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

// readHistogram is histogram that says why a present family cannot be
// used: one matching series that fromDTO rejects makes the whole concept
// invalid.
func (ix familyIndex) readHistogram(name string, sel selector, mirrors []string) (Histogram, bool, string) {
	f, ok := ix[name]
	if !ok {
		return Histogram{}, false, ""
	}
	groups := map[string]Histogram{}
	for _, m := range f.GetMetric() {
		if m.Histogram == nil || !sel.keeps(m) {
			continue
		}
		h, why := fromDTO(m.Histogram)
		if why != "" {
			return Histogram{}, false, seriesLabel(name, m) + ": " + why
		}
		key := groupKey(m, mirrors)
		if old, seen := groups[key]; !seen || h.Count > old.Count {
			groups[key] = h
		}
	}
	if len(groups) == 0 {
		return Histogram{}, false, ""
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
	return out, true, ""
}

// fromDTO converts a classic histogram, or says why it cannot be used: a
// value that is not finite (a NaN sum would poison every later
// computation), a negative count or sum (every concept is a duration or a
// token count), cumulative buckets that decrease, or a _count below the
// bucket total (the buckets then count observations the count does not).
func fromDTO(d *dto.Histogram) (Histogram, string) {
	h := Histogram{Sum: d.GetSampleSum()}
	hasCount := d.SampleCount != nil || d.SampleCountFloat != nil
	h.Count = float64(d.GetSampleCount())
	if d.SampleCountFloat != nil {
		h.Count = d.GetSampleCountFloat()
	}
	if !finiteNum(h.Sum) || !finiteNum(h.Count) {
		return Histogram{}, fmt.Sprintf("count %v, sum %v: not finite", h.Count, h.Sum)
	}
	if h.Sum < 0 || h.Count < 0 {
		return Histogram{}, fmt.Sprintf("count %v, sum %v: negative", h.Count, h.Sum)
	}
	buckets := append([]*dto.Bucket(nil), d.GetBucket()...)
	sort.SliceStable(buckets, func(i, j int) bool { return buckets[i].GetUpperBound() < buckets[j].GetUpperBound() })
	total, prev, prevBound := 0.0, 0.0, math.Inf(-1)
	for _, b := range buckets {
		c := float64(b.GetCumulativeCount())
		if b.CumulativeCountFloat != nil {
			c = b.GetCumulativeCountFloat()
		}
		ub := b.GetUpperBound()
		if !finiteNum(c) || math.IsNaN(ub) {
			return Histogram{}, fmt.Sprintf("bucket le=%v is %v: not finite", ub, c)
		}
		if c < 0 {
			return Histogram{}, fmt.Sprintf("bucket le=%v is %v: negative", ub, c)
		}
		if c < prev {
			return Histogram{}, fmt.Sprintf("cumulative buckets decrease: le=%v is %v, le=%v is %v", prevBound, prev, ub, c)
		}
		prev, prevBound, total = c, ub, c
		if math.IsInf(ub, -1) {
			continue // nothing is at or below -Inf
		}
		if math.IsInf(ub, +1) {
			continue
		}
		if n := len(h.Bounds); n > 0 && h.Bounds[n-1] == ub {
			continue // a repeated bound adds nothing
		}
		h.Bounds = append(h.Bounds, ub)
		h.Cumulative = append(h.Cumulative, c)
	}
	switch {
	case !hasCount:
		h.Count = total // no _count line: the buckets are all there is
	case h.Count < total:
		return Histogram{}, fmt.Sprintf("_count %v is below its bucket total %v", h.Count, total)
	}
	return h, ""
}

func finiteNum(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// selector picks the series of a family a concept reads.
type selector struct {
	match   map[string]string   // the label must have this value
	exclude map[string][]string // the label must not have any of these values
	// endpoint names a label that must carry the server path of a
	// registered endpoint (package endpoints): an engine's request counter
	// by handler counts every endpoint llmbench may send to.
	endpoint string
}

func (sel selector) keeps(m *dto.Metric) bool {
	if sel.endpoint != "" {
		if v, ok := labelValue(m, sel.endpoint); !ok || !endpoints.IsServerPath(v) {
			return false
		}
	}
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
