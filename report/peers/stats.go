package peers

import (
	"math"
	"slices"

	"github.com/llmbench-org/llmbench/internal/quantile"
)

// numpyPercentile is numpy.percentile's default (method "linear"): the
// value at rank p·(n−1), interpolated between its neighbours. vLLM, SGLang
// and AIPerf report their percentiles so.
func numpyPercentile(p float64, xs []float64) float64 {
	h := p * float64(len(xs)-1)
	lo := int(math.Floor(h))
	if lo >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[lo] + (h-float64(lo))*(xs[lo+1]-xs[lo])
}

// inverseCDF is GuideLLM's percentile: the first value whose cumulative
// probability reaches p (every value weighs 1/n), i.e. the ⌈p·n⌉-th.
func inverseCDF(p float64, xs []float64) float64 {
	i := int(math.Ceil(p*float64(len(xs)))) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

// llmbenchQuantile is the project's estimator (package quantile).
func llmbenchQuantile(p float64, xs []float64) float64 { return quantile.OfSorted(p, xs) }

// statOf is one statistic of xs ("mean", "p50", "p90", "p99") under the
// quantile estimator q; ok is false without samples.
func statOf(stat string, xs []float64, q func(float64, []float64) float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	if stat == "mean" {
		var s float64
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs)), true
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	var p float64
	switch stat {
	case "p50":
		p = 0.5
	case "p90":
		p = 0.9
	case "p99":
		p = 0.99
	default:
		return 0, false
	}
	return q(p, sorted), true
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
