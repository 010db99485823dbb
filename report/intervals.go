package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/llmbench-org/llmbench/internal/interval"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
	"github.com/llmbench-org/llmbench/rundir"
)

// DistCI are the confidence intervals of a Dist's figures
// (docs/decisions/0038): the mean's (Student's t) and each reported
// quantile's (distribution-free, from the order statistics
// interval.Quantile names), at Confidence.
type DistCI struct {
	Confidence float64 `json:"confidence"`
	Mean       Bounds  `json:"mean"`
	// Quantiles has every quantile the Dist reports: p50, p90, p95, p99 and
	// the configured percentiles, by name ("p99.9").
	Quantiles map[string]Bounds `json:"quantiles"`
	// TooFew names the quantiles whose sample is too small for their rank
	// (their interval is open on a side: a p99 needs 368 samples for a 95 %
	// upper bound), sorted by percentile; every output marks them.
	TooFew []string `json:"too_few,omitempty"`
	// Source says what the intervals were read from: CISamples (every
	// sample, exactly) or CISketch (a log-linear sketch of every sample,
	// the ITL's: each bound is the sketch's order statistic widened by
	// chunkdigest.RelativeError, so the interval holds the exact one).
	Source string `json:"source"`
}

// Where a DistCI's intervals were read from.
const (
	CISamples = "samples"
	CISketch  = "sketch"
)

// Bounds is a confidence interval [Lo, Hi]. A side the sample cannot bound
// is infinite here and null in JSON.
type Bounds struct {
	Lo, Hi float64
}

// Bounded reports whether both sides are finite.
func (b Bounds) Bounded() bool { return !math.IsInf(b.Lo, 0) && !math.IsInf(b.Hi, 0) }

// Contains reports whether v lies in [Lo, Hi].
func (b Bounds) Contains(v float64) bool { return b.Lo <= v && v <= b.Hi }

// MarshalJSON writes {"lo": x, "hi": y}, null for an unbounded side.
func (b Bounds) MarshalJSON() ([]byte, error) {
	side := func(v float64) *float64 {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil
		}
		return &v
	}
	return json.Marshal(struct {
		Lo *float64 `json:"lo"`
		Hi *float64 `json:"hi"`
	}{side(b.Lo), side(b.Hi)})
}

// UnmarshalJSON reads what MarshalJSON writes: a null lo is −Inf, a null
// hi +Inf.
func (b *Bounds) UnmarshalJSON(data []byte) error {
	var v struct {
		Lo *float64 `json:"lo"`
		Hi *float64 `json:"hi"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("confidence interval: %w", err)
	}
	*b = Bounds{Lo: math.Inf(-1), Hi: math.Inf(1)}
	if v.Lo != nil {
		b.Lo = *v.Lo
	}
	if v.Hi != nil {
		b.Hi = *v.Hi
	}
	return nil
}

func boundsOf(iv interval.Interval) Bounds { return Bounds{Lo: iv.Lo, Hi: iv.Hi} }

// Interval is b as the interval package's value, with the sample size n.
func (b Bounds) Interval(n int) interval.Interval { return interval.Interval{Lo: b.Lo, Hi: b.Hi, N: n} }

// fixedPercentiles are the quantiles every Dist has a field of.
var fixedPercentiles = []float64{50, 90, 95, 99}

// reportedPercentiles are the fixed ones and ps, ascending, once each.
func reportedPercentiles(ps []float64) []float64 {
	out := slices.Concat(fixedPercentiles, ps)
	slices.Sort(out)
	return slices.Compact(out)
}

// sampleCI is the intervals of a Dist of the sorted samples xs (at least
// one) at the percentiles ps and the fixed ones.
func sampleCI(xs []float64, mean, sd float64, ps []float64) *DistCI {
	ci := &DistCI{Confidence: interval.Confidence, Source: CISamples, Quantiles: map[string]Bounds{},
		Mean: boundsOf(interval.Mean(mean, sd, len(xs), interval.Confidence))}
	for _, p := range reportedPercentiles(ps) {
		ci.add(p, boundsOf(interval.Quantile(p/100, interval.Confidence, xs)))
	}
	return ci
}

// sketchCI is sampleCI for the values a sketch holds: the same ranks, each
// order statistic read from the sketch and widened by its relative error
// so the interval holds the one the exact values would give.
func sketchCI(sk *chunkdigest.Sketch, ps []float64) *DistCI {
	n := sk.N()
	ci := &DistCI{Confidence: interval.Confidence, Source: CISketch, Quantiles: map[string]Bounds{},
		Mean: boundsOf(interval.Mean(sk.Mean(), sk.StdDev(), n, interval.Confidence))}
	for _, p := range reportedPercentiles(ps) {
		lo, hi := interval.QuantileRanks(p/100, interval.Confidence, n)
		b := Bounds{Lo: math.Inf(-1), Hi: math.Inf(1)}
		if lo >= 1 {
			b.Lo = widen(sk.OrderStat(lo-1), -1)
		}
		if hi <= n {
			b.Hi = widen(sk.OrderStat(hi-1), +1)
		}
		ci.add(p, b)
	}
	return ci
}

// widen moves v outward (dir −1: down, +1: up) by the sketch's relative
// error, the most a value read from it is off the exact one.
func widen(v float64, dir float64) float64 {
	return v + dir*math.Abs(v)*chunkdigest.RelativeError
}

func (ci *DistCI) add(p float64, b Bounds) {
	name := rundir.PercentileName(p)
	ci.Quantiles[name] = b
	if !b.Bounded() {
		ci.TooFew = append(ci.TooFew, name)
	}
}

// QuantileCI is the confidence interval of the percentile p (in percent)
// of d, and whether the summary has one (not without samples, nor in a
// summary written before intervals existed).
func (d Dist) QuantileCI(p float64) (interval.Interval, bool) {
	if d.CI == nil {
		return interval.Unknown(), false
	}
	b, ok := d.CI.Quantiles[rundir.PercentileName(p)]
	if !ok {
		return interval.Unknown(), false
	}
	return b.Interval(d.N), true
}

// MeanCI is the confidence interval of d's mean, and whether it has one.
func (d Dist) MeanCI() (interval.Interval, bool) {
	if d.CI == nil {
		return interval.Unknown(), false
	}
	return d.CI.Mean.Interval(d.N), true
}

// TooFew reports whether d's sample is too small for the rank of its
// percentile p: the interval is open on a side. False when d has no
// interval to say so (an old summary).
func (d Dist) TooFew(p float64) bool {
	iv, ok := d.QuantileCI(p)
	return ok && !iv.Bounded()
}

// fractionCI is the Wilson interval of k of n as Bounds (nil without
// trials: a fraction of nothing has no figure to bound).
func fractionCI(k, n int) *Bounds {
	if n <= 0 {
		return nil
	}
	b := boundsOf(interval.Proportion(k, n, interval.Confidence))
	return &b
}
