package scrape

import (
	"encoding/json"
	"math"
	"sort"
)

// Estimate is a quantile read from a histogram. The true quantile lies
// between Lower and Upper, the bounds of the bucket it fell in; Value is the
// linear interpolation inside that bucket that Prometheus' histogram_quantile
// makes. Count is how many observations the histogram held.
//
// With no observations, or an invalid q, Value, Lower and Upper are NaN.
// AboveTop means the quantile fell in the +Inf bucket: it is somewhere above
// the highest finite bound, Value is that bound (a lower limit, not an
// estimate) and Upper is +Inf. Non-finite numbers encode as JSON null.
type Estimate struct {
	Value    float64 `json:"value"`
	Lower    float64 `json:"lower"`
	Upper    float64 `json:"upper"`
	Count    float64 `json:"count"`
	AboveTop bool    `json:"above_top,omitempty"`
}

// OK reports whether the estimate is a number: the histogram was not empty.
func (e Estimate) OK() bool { return !math.IsNaN(e.Value) }

// MarshalJSON writes NaN and ±Inf as null, which encoding/json cannot.
func (e Estimate) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Value    *float64 `json:"value"`
		Lower    *float64 `json:"lower"`
		Upper    *float64 `json:"upper"`
		Count    float64  `json:"count"`
		AboveTop bool     `json:"above_top,omitempty"`
	}{finite(e.Value), finite(e.Lower), finite(e.Upper), e.Count, e.AboveTop})
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Quantile estimates the q-quantile (0 ≤ q ≤ 1) like histogram_quantile:
// the rank q·Count falls in the first bucket whose cumulative count reaches
// it, and the value is interpolated linearly between that bucket's bounds.
// The lowest bucket starts at 0 when its upper bound is positive (and is
// just its bound otherwise). Empty leading buckets are skipped, so q = 0 is
// the lower bound of the first bucket that holds anything. Cumulative counts
// that go down (a torn delta) are read as their running maximum.
func (h Histogram) Quantile(q float64) Estimate {
	nan := math.NaN()
	total := h.total()
	if !h.Valid() {
		return Estimate{Value: nan, Lower: nan, Upper: nan}
	}
	if math.IsNaN(q) || q < 0 || q > 1 || !(total > 0) {
		if !(total > 0) {
			total = 0
		}
		return Estimate{Value: nan, Lower: nan, Upper: nan, Count: total}
	}
	rank := q * total
	prev := 0.0 // cumulative count below the current bucket
	for i, ub := range h.Bounds {
		c := math.Max(h.Cumulative[i], prev)
		if c > 0 && c >= rank {
			lower := 0.0
			if i > 0 {
				lower = h.Bounds[i-1]
			} else if ub <= 0 {
				return Estimate{Value: ub, Lower: ub, Upper: ub, Count: total}
			}
			frac := (rank - prev) / (c - prev)
			return Estimate{Value: lower + (ub-lower)*frac, Lower: lower, Upper: ub, Count: total}
		}
		prev = c
	}
	if len(h.Bounds) == 0 {
		return Estimate{Value: nan, Lower: nan, Upper: math.Inf(1), Count: total, AboveTop: true}
	}
	top := h.Bounds[len(h.Bounds)-1]
	return Estimate{Value: top, Lower: top, Upper: math.Inf(1), Count: total, AboveTop: true}
}

// total is the number of observations: Count, or the last cumulative count
// if that is larger (a histogram built by hand may lack Count).
func (h Histogram) total() float64 {
	t := h.Count
	if n := len(h.Cumulative); n > 0 && h.Cumulative[n-1] > t {
		t = h.Cumulative[n-1]
	}
	return t
}

// Mean is Sum/Count; ok is false when the histogram is empty.
func (h Histogram) Mean() (float64, bool) {
	if !(h.Count > 0) {
		return 0, false
	}
	return h.Sum / h.Count, true
}

// Bin puts samples (seconds) into buckets with the given finite upper
// bounds, so a client's own measurements can be compared with a server
// histogram at exactly the server's points. bounds must be increasing.
func Bin(bounds []float64, samples []float64) Histogram {
	h := Histogram{Bounds: append([]float64(nil), bounds...), Cumulative: make([]float64, len(bounds))}
	for _, s := range samples {
		if math.IsNaN(s) {
			continue
		}
		h.Count++
		h.Sum += s
		// The first bound ≥ s is the bucket (le is inclusive).
		if i := sort.SearchFloat64s(h.Bounds, s); i < len(h.Bounds) {
			h.Cumulative[i]++
		}
	}
	for i := 1; i < len(h.Cumulative); i++ {
		h.Cumulative[i] += h.Cumulative[i-1]
	}
	return h
}

// CDF returns, for each finite bound, the fraction of observations at or
// below it; nil when the histogram is empty.
func (h Histogram) CDF() []float64 {
	total := h.total()
	if !(total > 0) {
		return nil
	}
	out := make([]float64, len(h.Cumulative))
	for i, c := range h.Cumulative {
		out[i] = c / total
	}
	return out
}

func (h Histogram) clone() Histogram {
	h.Bounds = append([]float64(nil), h.Bounds...)
	h.Cumulative = append([]float64(nil), h.Cumulative...)
	return h
}

// scaled converts the bounds and sum by a unit factor (ms → s is 0.001).
func (h Histogram) scaled(f float64) Histogram {
	if f == 0 || f == 1 {
		return h
	}
	h = h.clone()
	for i := range h.Bounds {
		h.Bounds[i] *= f
	}
	h.Sum *= f
	return h
}

// Valid reports whether the histogram is well formed: one cumulative count
// per finite bound. A histogram read back from a damaged file may not be;
// every method treats an invalid one as unknown rather than indexing past it.
func (h Histogram) Valid() bool { return len(h.Cumulative) == len(h.Bounds) }

// sameBounds reports whether two valid histograms have identical bucket bounds.
func sameBounds(a, b Histogram) bool {
	if !a.Valid() || !b.Valid() || len(a.Bounds) != len(b.Bounds) {
		return false
	}
	for i := range a.Bounds {
		if a.Bounds[i] != b.Bounds[i] {
			return false
		}
	}
	return true
}

// merge adds two histograms of the same quantity (two replicas). With
// different buckets, the result keeps only the bounds both have: the count
// at or below a bound one of them lacks is unknown, so it cannot be added.
func (h Histogram) merge(o Histogram) Histogram {
	switch {
	case !o.Valid():
		return h.clone()
	case !h.Valid():
		return o.clone()
	}
	out := Histogram{Count: h.Count + o.Count, Sum: h.Sum + o.Sum}
	if sameBounds(h, o) {
		out.Bounds = append([]float64(nil), h.Bounds...)
		out.Cumulative = make([]float64, len(h.Cumulative))
		for i := range h.Cumulative {
			out.Cumulative[i] = h.Cumulative[i] + o.Cumulative[i]
		}
		return out
	}
	j := 0
	for i, b := range h.Bounds {
		for j < len(o.Bounds) && o.Bounds[j] < b {
			j++
		}
		if j < len(o.Bounds) && o.Bounds[j] == b {
			out.Bounds = append(out.Bounds, b)
			out.Cumulative = append(out.Cumulative, h.Cumulative[i]+o.Cumulative[j])
		}
	}
	return out
}

// Contains reports whether v lies within the bucket that limits the
// estimate: the comparison server quantiles allow ("the client's p50 lies
// in the bucket holding the server's p50"), since the value inside the
// bucket is only an interpolation.
func (e Estimate) Contains(v float64) bool {
	return e.OK() && v >= e.Lower && v <= e.Upper
}

// CDFPoint compares two distributions at one bucket bound: the fraction of
// each at or below it.
type CDFPoint struct {
	Bound  float64 `json:"le"`
	Server float64 `json:"server"`
	Client float64 `json:"client"`
}

// CompareCDF bins the client's samples (seconds) into the server
// histogram's buckets and returns both CDFs at every finite bound, and the
// largest absolute gap between them (a Kolmogorov–Smirnov distance
// restricted to the server's points). nil and 0 when either side is empty.
func CompareCDF(server Histogram, client []float64) ([]CDFPoint, float64) {
	s, c := server.CDF(), Bin(server.Bounds, client).CDF()
	if s == nil || c == nil {
		return nil, 0
	}
	out := make([]CDFPoint, len(s))
	gap := 0.0
	for i := range s {
		out[i] = CDFPoint{Bound: server.Bounds[i], Server: s[i], Client: c[i]}
		gap = math.Max(gap, math.Abs(s[i]-c[i]))
	}
	return out, gap
}
