// Package interval is the project's one definition of the uncertainty on a
// reported figure and of deciding a bound under it: a 95 % confidence
// interval for a sample quantile (distribution-free, from order
// statistics), for a mean (Student's t) and for a proportion (Wilson), and
// the three-valued verdict of an interval against a limit.
//
// Every output that shows a percentile, a mean or a fraction takes its
// interval from here, and every decision that compares one with a bound
// (a gate, an SLO probe, a phase that runs until decided) goes through
// Decide, so a figure and the verdict on it never disagree.
package interval

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence is the level every reported interval is computed at.
const Confidence = 0.95

// Interval is a confidence interval [Lo, Hi] for an estimate.
//
// A side the sample cannot bound is infinite (Lo = −Inf, Hi = +Inf): a
// p99 from 100 requests has no upper bound at 95 %, since the largest of
// 100 samples is below the true p99 more than 2.5 % of the time. Bounded
// says both sides are finite. N is the sample size.
type Interval struct {
	Lo, Hi float64
	N      int
}

// Bounded reports whether both sides are finite.
func (iv Interval) Bounded() bool { return !math.IsInf(iv.Lo, 0) && !math.IsInf(iv.Hi, 0) }

// Unknown is the interval of an estimate with no sample at all.
func Unknown() Interval { return Interval{Lo: math.Inf(-1), Hi: math.Inf(1)} }

// exactRanksUpTo is the sample size up to which QuantileRanks sums the
// binomial distribution exactly; above it the normal approximation (with
// continuity correction) is within a rank of the exact answer and costs
// nothing, where the exact sum would cost O(n) per quantile.
const exactRanksUpTo = 5000

// QuantileRanks are the 1-based ranks (lo, hi) of the order statistics that
// bound the p-quantile of the population a sample of n was drawn from with
// probability at least conf, split equally between the two tails: with B
// the number of samples below the true quantile, B ~ Binomial(n, p), and
// X(l) ≤ ξp ≤ X(u) exactly when l ≤ B < u. lo = 0 means no order statistic
// bounds it from below, hi = n+1 none from above.
func QuantileRanks(p, conf float64, n int) (lo, hi int) {
	switch {
	case n <= 0:
		return 0, 1
	case p <= 0: // every sample is at or above the quantile
		return 0, 1
	case p >= 1:
		return n, n + 1
	}
	tail := (1 - conf) / 2
	if n > exactRanksUpTo {
		return approximateRanks(n, p, tail)
	}
	return exactRanks(n, p, tail)
}

// exactRanks sums the binomial distribution: lo is the first k with
// P(B ≤ k) > tail, hi−1 the first k with P(B ≤ k) ≥ 1 − tail.
func exactRanks(n int, p, tail float64) (lo, hi int) {
	lo, hi = -1, n+1
	lp, lq := math.Log(p), math.Log1p(-p)
	lgN, _ := math.Lgamma(float64(n + 1))
	cdf := 0.0
	for k := 0; k <= n; k++ {
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		cdf += math.Exp(lgN - lk - lnk + float64(k)*lp + float64(n-k)*lq)
		if lo < 0 && cdf > tail {
			lo = k
		}
		if cdf >= 1-tail {
			hi = k + 1
			break
		}
	}
	return max(lo, 0), hi
}

// approximateRanks solves the same two conditions with the normal
// approximation to the binomial, P(B ≤ k) ≈ Φ((k + ½ − np) / √(np(1−p))).
func approximateRanks(n int, p, tail float64) (lo, hi int) {
	mean, sd := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
	z := distuv.UnitNormal.Quantile(1 - tail)
	lo = int(math.Floor(mean-z*sd-0.5)) + 1
	hi = int(math.Ceil(mean+z*sd-0.5)) + 1
	return min(max(lo, 0), n), min(max(hi, 1), n+1)
}

// Quantile is the confidence interval at conf of the p-quantile (0 ≤ p ≤ 1)
// of the population xs, sorted ascending, was drawn from: the order
// statistics QuantileRanks names. It assumes nothing about the
// distribution, only that the samples are independent draws.
func Quantile(p, conf float64, sorted []float64) Interval {
	n := len(sorted)
	lo, hi := QuantileRanks(p, conf, n)
	iv := Interval{Lo: math.Inf(-1), Hi: math.Inf(1), N: n}
	if lo >= 1 {
		iv.Lo = sorted[lo-1]
	}
	if hi <= n {
		iv.Hi = sorted[hi-1]
	}
	return iv
}

// Mean is the Student's t confidence interval at conf of the mean of the
// population a sample of n with this mean and sample standard deviation
// was drawn from. With fewer than two samples there is no interval.
func Mean(mean, stddev float64, n int, conf float64) Interval {
	if n < 2 || math.IsNaN(stddev) {
		iv := Unknown()
		iv.N = n
		return iv
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(1 - (1-conf)/2)
	half := t * stddev / math.Sqrt(float64(n))
	return Interval{Lo: mean - half, Hi: mean + half, N: n}
}

// Proportion is the Wilson score interval at conf of a proportion seen k
// times in n trials (a failure rate, a goodput fraction): unlike the
// normal approximation it stays inside [0, 1] and is honest at k = 0 or n.
func Proportion(k, n int, conf float64) Interval {
	if n <= 0 {
		return Interval{Lo: 0, Hi: 1}
	}
	z := distuv.UnitNormal.Quantile(1 - (1-conf)/2)
	nf, ph := float64(n), float64(k)/float64(n)
	den := 1 + z*z/nf
	centre := (ph + z*z/(2*nf)) / den
	half := z / den * math.Sqrt(ph*(1-ph)/nf+z*z/(4*nf*nf))
	return Interval{Lo: max(centre-half, 0), Hi: min(centre+half, 1), N: n}
}
