package workload

import (
	"fmt"
	"math"

	"github.com/llmbench-org/llmbench/scenarios"
)

// MaxTokens bounds a planned prompt or output length, in tokens. It is
// above the context window of every model served today (the largest claim
// 1 to 10 million tokens), so no real benchmark needs more, and it keeps a
// request buildable: a synthetic prompt is generated as text, about 5 bytes
// per token, so MaxTokens is some 50 MB for one request, where the
// 1e9 a typo can write would be 5 GB and exhaust memory. NewPlan refuses a
// length above it rather than clamping it.
const MaxTokens = 10_000_000

// MaxRate bounds an open loop's arrival rate, in requests per second: a
// million a second is a microsecond between arrivals, beyond what one
// client process can send (each request costs it tens of microseconds) and
// orders of magnitude beyond any engine. A rate such as 1e300 would put
// every arrival at the same instant and never let the schedule end.
const MaxRate = 1_000_000

// tailZ is how far into a normal distribution's tail (in standard
// deviations; about one draw in a billion beyond it) a length distribution
// without a max must stay under MaxTokens.
const tailZ = 6

// checkLength refuses a length distribution that is absurd: a length above
// MaxTokens, parameters that are not finite numbers, or a normal or
// lognormal whose draws would run past MaxTokens (no max to clamp them).
func checkLength(l scenarios.Length) error {
	over := func(what string, v float64) error {
		return fmt.Errorf("%s %g is above the maximum of %d tokens per request (workload.MaxTokens: beyond every model's context)", what, v, MaxTokens)
	}
	switch l.Dist {
	case scenarios.DistFixed:
		if l.Value > MaxTokens {
			return over("length", float64(l.Value))
		}
	case scenarios.DistUniform:
		if l.Max > MaxTokens {
			return over("max", float64(l.Max))
		}
	case scenarios.DistNormal, scenarios.DistLognormal:
		if math.IsNaN(l.Mean) || math.IsInf(l.Mean, 0) || math.IsNaN(l.StdDev) || math.IsInf(l.StdDev, 0) {
			return fmt.Errorf("%s(mean %g, stddev %g): mean and stddev must be finite numbers", l.Dist, l.Mean, l.StdDev)
		}
		switch {
		case l.Mean > MaxTokens:
			return over("mean", l.Mean)
		case l.Min > MaxTokens:
			return over("min", float64(l.Min))
		case l.Max > MaxTokens:
			return over("max", float64(l.Max))
		}
		d := normalLength{mean: l.Mean, stddev: l.StdDev}
		if l.Dist == scenarios.DistLognormal {
			d = newLognormal(l.Mean, l.StdDev, 1, 0)
		}
		if math.IsNaN(d.mean) || math.IsInf(d.mean, 0) || math.IsNaN(d.stddev) || math.IsInf(d.stddev, 0) {
			return fmt.Errorf("%s(mean %g, stddev %g): the draws overflow (the distribution's parameters are not finite)", l.Dist, l.Mean, l.StdDev)
		}
		if l.Max > 0 {
			return nil
		}
		hi := d.mean + tailZ*d.stddev
		if d.log {
			hi = math.Exp(hi)
		}
		if !(hi <= MaxTokens) {
			return fmt.Errorf("%s(mean %g, stddev %g): draws reach %.3g tokens, above the maximum of %d per request (workload.MaxTokens); set a max", l.Dist, l.Mean, l.StdDev, hi, MaxTokens)
		}
	}
	return nil
}

// checkRate refuses an open-loop rate above MaxRate (or not a number).
func checkRate(rate float64) error {
	if !(rate <= MaxRate) {
		return fmt.Errorf("rate %g/s is above the maximum of %d requests/s (workload.MaxRate: beyond what a client can send or an engine serve)", rate, MaxRate)
	}
	return nil
}

// checkTokens refuses one length read from a data file or the scenario.
func checkTokens(what string, n int) error {
	if n > MaxTokens {
		return fmt.Errorf("%s %d is above the maximum of %d tokens per request (workload.MaxTokens: beyond every model's context)", what, n, MaxTokens)
	}
	return nil
}
