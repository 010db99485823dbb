package interval

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestQuantileRanks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      float64
		n      int
		lo, hi int
	}{
		// The textbook median interval: P(40 ≤ B ≤ 60) = 0.9648 for n = 100.
		{"median of 100", 0.5, 100, 40, 61},
		{"median of 10", 0.5, 10, 2, 9},
		// 1 − 0.99^367 = 0.97497: the largest of 367 samples is not a
		// 97.5 % upper bound of the p99; of 368 it is.
		{"p99 of 367", 0.99, 367, 359, 368},
		{"p99 of 368", 0.99, 368, 360, 368},
		{"no samples", 0.5, 0, 0, 1},
		{"p0", 0, 50, 0, 1},
		{"p100", 1, 50, 50, 51},
	} {
		lo, hi := QuantileRanks(tc.p, Confidence, tc.n)
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("%s: ranks (%d, %d), want (%d, %d)", tc.name, lo, hi, tc.lo, tc.hi)
		}
	}
}

// TestQuantileRanksCoverage checks every rank pair's coverage against the
// binomial distribution it claims: at least conf, and no pair one rank
// narrower on either side would still reach it.
func TestQuantileRanksCoverage(t *testing.T) {
	for _, n := range []int{5, 20, 50, 120, 367, 1000} {
		for _, p := range []float64{0.5, 0.9, 0.95, 0.99, 0.999} {
			lo, hi := QuantileRanks(p, Confidence, n)
			cdf := func(k int) float64 { // P(B ≤ k)
				s := 0.0
				for j := 0; j <= k && j <= n; j++ {
					s += binomPMF(n, j, p)
				}
				return s
			}
			below := 0.0 // P(B < lo): X(lo) above the quantile
			if lo >= 1 {
				below = cdf(lo - 1)
			}
			above := 0.0 // P(B ≥ hi): X(hi) below it
			if hi <= n {
				above = 1 - cdf(hi-1)
			}
			tail := (1 - Confidence) / 2
			if below > tail+1e-12 || above > tail+1e-12 {
				t.Errorf("n=%d p=%v: ranks (%d, %d) miss %.4f below, %.4f above; want ≤ %.3f each", n, p, lo, hi, below, above, tail)
			}
			if lo+1 <= n && cdf(lo) <= tail {
				t.Errorf("n=%d p=%v: lo %d could be %d", n, p, lo, lo+1)
			}
			if hi-1 >= 1 && hi-1 <= n && 1-cdf(hi-2) <= tail {
				t.Errorf("n=%d p=%v: hi %d could be %d", n, p, hi, hi-1)
			}
		}
	}
}

func binomPMF(n, k int, p float64) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return math.Exp(a - b - c + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
}

// The normal approximation used above exactRanksUpTo agrees with the
// exact sum to within a rank on either side.
func TestQuantileRanksApproximation(t *testing.T) {
	tail := (1 - Confidence) / 2
	for _, n := range []int{1000, exactRanksUpTo, 20000} {
		for _, p := range []float64{0.5, 0.9, 0.99, 0.999} {
			elo, ehi := exactRanks(n, p, tail)
			alo, ahi := approximateRanks(n, p, tail)
			if abs(elo-alo) > 1 || abs(ehi-ahi) > 1 {
				t.Errorf("n=%d p=%v: exact (%d, %d), approximate (%d, %d)", n, p, elo, ehi, alo, ahi)
			}
		}
	}
}

func abs(x int) int { return max(x, -x) }

// TestQuantileCovers draws from a skewed distribution whose p90 is known
// and counts how often the interval holds it: about 95 % of the time.
func TestQuantileCovers(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	truth := -math.Log(1 - 0.9) // p90 of Exp(1)
	const trials = 2000
	held := 0
	xs := make([]float64, 200)
	for range trials {
		for i := range xs {
			xs[i] = rng.ExpFloat64()
		}
		slices.Sort(xs)
		if iv := Quantile(0.9, Confidence, xs); iv.Lo <= truth && truth <= iv.Hi {
			held++
		}
	}
	// Binomial(2000, ≥0.95) falls below 0.935 with probability < 1e-3.
	if got := float64(held) / trials; got < 0.935 {
		t.Errorf("interval held the true p90 in %.3f of trials, want ≥ 0.95", got)
	}
}

func TestQuantileUnbounded(t *testing.T) {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	iv := Quantile(0.99, Confidence, xs)
	if !math.IsInf(iv.Hi, 1) || iv.Bounded() || iv.Lo != 97 || iv.N != 100 {
		t.Errorf("p99 of 100: %+v, want Lo 97, Hi +Inf, unbounded", iv)
	}
	if iv := Quantile(0.5, Confidence, xs); iv.Lo != 40 || iv.Hi != 61 || !iv.Bounded() {
		t.Errorf("p50 of 1..100: %+v, want [40, 61]", iv)
	}
}

func TestMean(t *testing.T) {
	// n = 10, sd = 2: t(0.975, 9) = 2.262157 → half width 1.430714.
	iv := Mean(5, 2, 10, Confidence)
	if math.Abs(iv.Lo-3.569286) > 1e-5 || math.Abs(iv.Hi-6.430714) > 1e-5 {
		t.Errorf("Mean: %+v, want [3.569286, 6.430714]", iv)
	}
	if iv := Mean(5, 0, 1, Confidence); iv.Bounded() {
		t.Errorf("one sample: %+v, want unbounded", iv)
	}
}

func TestProportion(t *testing.T) {
	for _, tc := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 10, 0, 0.277533},
		{10, 10, 0.722467, 1},
		{5, 10, 0.236593, 0.763407},
		{39, 100, 0.300169, 0.487970},
	} {
		iv := Proportion(tc.k, tc.n, Confidence)
		if math.Abs(iv.Lo-tc.lo) > 1e-5 || math.Abs(iv.Hi-tc.hi) > 1e-5 {
			t.Errorf("Proportion(%d, %d) = [%.6f, %.6f], want [%.6f, %.6f]", tc.k, tc.n, iv.Lo, iv.Hi, tc.lo, tc.hi)
		}
	}
}

func TestDecide(t *testing.T) {
	below := func(limit float64) func(float64) bool { return func(v float64) bool { return v < limit } }
	for _, tc := range []struct {
		iv   Interval
		want Verdict
	}{
		{Interval{Lo: 0.1, Hi: 0.4}, Pass},
		{Interval{Lo: 0.6, Hi: 0.9}, Fail},
		{Interval{Lo: 0.4, Hi: 0.6}, Inconclusive},
		{Interval{Lo: 0.4, Hi: math.Inf(1)}, Inconclusive},
		{Interval{Lo: 0.5, Hi: 0.5}, Fail},
		{Interval{Lo: 0.49, Hi: 0.49}, Pass},
	} {
		if got := Decide(tc.iv, below(0.5)); got != tc.want {
			t.Errorf("Decide(%+v, < 0.5) = %s, want %s", tc.iv, got, tc.want)
		}
	}
}
