package report

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/llmbench-org/llmbench/internal/interval"
	"github.com/llmbench-org/llmbench/rundir"
)

// gonumDist is how a Dist was computed before the radix sorts and the
// direct quantiles: sort.Float64s, then gonum's LinInterp quantiles.
func gonumDist(xs []float64, ps []float64) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	sort.Float64s(xs)
	q := func(p float64) float64 { return stat.Quantile(p, stat.LinInterp, xs, nil) }
	mean, std := stat.MeanStdDev(xs, nil)
	if len(xs) < 2 {
		std = 0
	}
	d := Dist{N: len(xs), Mean: mean, StdDev: std, P50: q(0.5), P90: q(0.9), P95: q(0.95), P99: q(0.99), Max: xs[len(xs)-1]}
	d.Quantiles = map[string]float64{}
	for _, p := range ps {
		d.Quantiles[rundir.PercentileName(p)] = q(p / 100)
	}
	d.CI = intervalsOf(xs, mean, std, ps)
	return d
}

// intervalsOf is what a Dist's CI must hold, written out from package
// interval: the t interval of the mean, and for p50, p90, p95, p99 and ps
// the order statistics interval.Quantile names, each open side listed.
func intervalsOf(sorted []float64, mean, sd float64, ps []float64) *DistCI {
	ci := &DistCI{Confidence: 0.95, Source: CISamples, Quantiles: map[string]Bounds{}}
	m := interval.Mean(mean, sd, len(sorted), 0.95)
	ci.Mean = Bounds{m.Lo, m.Hi}
	all := append([]float64{50, 90, 95, 99}, ps...)
	sort.Float64s(all)
	for i, p := range all {
		if i > 0 && p == all[i-1] {
			continue
		}
		iv := interval.Quantile(p/100, 0.95, sorted)
		name := rundir.PercentileName(p)
		ci.Quantiles[name] = Bounds{iv.Lo, iv.Hi}
		if !iv.Bounded() {
			ci.TooFew = append(ci.TooFew, name)
		}
	}
	return ci
}

// distWith and durationDist give, to the bit, what sorting with
// sort.Float64s and reading gonum's quantiles gives: any length, ties,
// negatives, percentiles at and near the ends.
func TestDistIsGonums(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 4))
	ps := []float64{0, 0.1, 25, 50, 99.9, 99.99, 100}
	for _, n := range []int{1, 2, 3, 10, 101, radixMin + 1, 20_000} {
		for _, shape := range []string{"spread", "ties", "signed"} {
			ds := make([]time.Duration, n)
			for i := range ds {
				switch shape {
				case "spread":
					ds[i] = time.Duration(rng.ExpFloat64() * 5e7)
				case "ties":
					ds[i] = time.Duration(rng.IntN(4)) * time.Millisecond
				case "signed":
					ds[i] = time.Duration(rng.NormFloat64() * 3e9)
				}
			}
			xs := make([]float64, n)
			for i, d := range ds {
				xs[i] = d.Seconds()
			}
			want := gonumDist(slices.Clone(xs), ps)
			if got := distWith(slices.Clone(xs), ps); !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %d values: distWith %+v, gonum %+v", shape, n, got, want)
			}
			wantOf := want
			wantOf.Quantiles = nil
			wantOf.CI = intervalsOf(slices.Sorted(slices.Values(xs)), want.Mean, want.StdDev, nil)
			if got := durationDistOf(slices.Clone(ds)); !reflect.DeepEqual(got, wantOf) {
				t.Errorf("%s, %d values: durationDistOf %+v, gonum %+v", shape, n, got, wantOf)
			}
			if got := distOf(slices.Clone(xs)); !reflect.DeepEqual(got, wantOf) {
				t.Errorf("%s, %d values: distOf %+v, gonum %+v", shape, n, got, wantOf)
			}
			if got := durationDist(ds, ps); !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %d values: durationDist %+v, gonum %+v", shape, n, got, want)
			}
		}
	}
	if q := distSorted([]float64{math.NaN(), 1, 2}).P50; !math.IsNaN(q) {
		t.Errorf("a quantile of values with NaN is %v, gonum says NaN", q)
	}
}
