package workload

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Pacer is an open-loop arrival schedule. It is pure: Offset gives the same
// answer for the same n every time, in whatever order it is asked, so a
// schedule can be tested without sleeping and printed before a run.
type Pacer interface {
	// Offset returns when the n-th arrival (n ≥ 0) is due, measured from the
	// start of its phase, and false when the schedule has no n-th arrival.
	Offset(n int) (time.Duration, bool)
}

// Every pacer except Replay is one construction: arrival points in "count
// space" (where arrivals come at unit rate: 0, 1, 2, ... for constant
// spacing, cumulative sums of mean-1 gaps for Poisson and gamma) mapped
// through the inverse of the integrated rate Λ(t) = ∫₀ᵗ rate. A constant rate
// makes Λ linear; stages make it piecewise quadratic (linear ramps). For
// Poisson this is the time-change construction of a non-homogeneous Poisson
// process, so a Poisson ramp is a true Poisson process of the ramped rate.
type pacer struct {
	points  points
	profile profile
}

var (
	_ Pacer = pacer{}
	_ Pacer = replay(nil)
)

func (p pacer) Offset(n int) (time.Duration, bool) {
	if n < 0 {
		return 0, false
	}
	return p.profile.at(p.points.at(n))
}

// Constant returns arrivals exactly 1/rate apart, the first at 0.
// A rate ≤ 0 has no arrivals.
func Constant(rate float64) Pacer { return pacer{evenly{}, constantRate(rate)} }

// Poisson returns a Poisson process of the given rate: independent
// exponential gaps with mean 1/rate, drawn from a stream seeded by seed. The
// first arrival is at 0, like the first request of vLLM's bench serve.
func Poisson(rate float64, seed uint64) Pacer {
	return pacer{newRenewal(seed, exponentialGap), constantRate(rate)}
}

// Gamma returns a renewal process whose gaps are gamma-distributed with mean
// 1/rate and coefficient of variation cv (shape 1/cv²): cv 1 is Poisson,
// larger is burstier. vLLM's --burstiness is 1/cv².
func Gamma(rate, cv float64, seed uint64) Pacer {
	return pacer{newRenewal(seed, gammaGap(1/(cv*cv))), constantRate(rate)}
}

// Arrival names the count-space process of a Ramp: "constant", "poisson"
// or "gamma" (with CV).
type Arrival struct {
	Process string
	CV      float64
}

// RateStage is one leg of a ramp: over Duration the rate moves linearly from
// the previous stage's Rate (0 before the first) to this one's.
type RateStage struct {
	Duration time.Duration
	Rate     float64
}

// Ramp returns arrivals whose rate follows the stages, spaced by the arrival
// process. The schedule ends with the last stage.
func Ramp(stages []RateStage, arrival Arrival, seed uint64) Pacer {
	return pacer{arrival.points(seed), newRampProfile(stages)}
}

func (a Arrival) points(seed uint64) points {
	switch a.Process {
	case "poisson":
		return newRenewal(seed, exponentialGap)
	case "gamma":
		return newRenewal(seed, gammaGap(1/(a.CV*a.CV)))
	}
	return evenly{}
}

// Replay returns the given offsets (sorted, from a trace) as the schedule.
func Replay(offsets []time.Duration) Pacer { return replay(offsets) }

type replay []time.Duration

func (r replay) Offset(n int) (time.Duration, bool) {
	if n < 0 || n >= len(r) {
		return 0, false
	}
	return r[n], true
}

// points is an arrival process at unit rate: at(n) is the n-th arrival's
// position in count space.
type points interface {
	at(n int) float64
}

type evenly struct{}

func (evenly) at(n int) float64 { return float64(n) }

// renewal is a unit-rate renewal process: arrival n is at the sum of n i.i.d.
// mean-1 gaps. The gaps are drawn in order from a seeded stream; a cursor makes
// in-order access O(1) per arrival, and asking for an earlier arrival replays
// the stream from the start, so the answer never depends on the order of calls.
type renewal struct {
	seed uint64
	gap  func(*rand.Rand) float64

	mu  *sync.Mutex
	cur *cursor
}

type cursor struct {
	rng *rand.Rand
	n   int
	at  float64
}

func newRenewal(seed uint64, gap func(*rand.Rand) float64) renewal {
	return renewal{seed: seed, gap: gap, mu: new(sync.Mutex), cur: new(cursor)}
}

func (r renewal) at(n int) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cur
	if c.rng == nil || n < c.n {
		*c = cursor{rng: rand.New(rand.NewPCG(r.seed, mix(r.seed)))}
	}
	for c.n < n {
		c.at += r.gap(c.rng)
		c.n++
	}
	return c.at
}

func exponentialGap(rng *rand.Rand) float64 { return rng.ExpFloat64() }

// gammaGap returns a sampler of gamma variates of the given shape and mean 1
// (Marsaglia and Tsang's method; shapes below 1 boosted by U^(1/shape)).
func gammaGap(shape float64) func(*rand.Rand) float64 {
	return func(rng *rand.Rand) float64 { return gammaVariate(rng, shape) / shape }
}

func gammaVariate(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gammaVariate(rng, shape+1) * math.Pow(rng.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// profile maps count space to time: at(u) is when Λ reaches u.
type profile interface {
	at(u float64) (time.Duration, bool)
}

type constantRate float64

func (c constantRate) at(u float64) (time.Duration, bool) {
	if c <= 0 || u < 0 {
		return 0, false
	}
	// u·1e9 is exact for whole u below 2^53/1e9, so constant spacing at a
	// whole-nanosecond period stays exact.
	return time.Duration(math.Round(u * 1e9 / float64(c))), true
}

// rampProfile is a piecewise-linear rate: segment k runs from start[k] for
// dur[k] seconds with the rate moving from r0[k] to r1[k]; cum[k] is Λ at
// its start.
type rampProfile struct {
	start, dur, r0, r1, cum []float64
	total                   float64 // Λ at the end of the last stage
}

func newRampProfile(stages []RateStage) rampProfile {
	var p rampProfile
	t, rate, cum := 0.0, 0.0, 0.0
	for _, st := range stages {
		d := st.Duration.Seconds()
		if d <= 0 { // a jump
			rate = st.Rate
			continue
		}
		p.start = append(p.start, t)
		p.dur = append(p.dur, d)
		p.r0 = append(p.r0, rate)
		p.r1 = append(p.r1, st.Rate)
		p.cum = append(p.cum, cum)
		cum += (rate + st.Rate) / 2 * d
		t += d
		rate = st.Rate
	}
	p.total = cum
	return p
}

// integral is Λ(t) for t in seconds, clamped to the stages.
func (p rampProfile) integral(t float64) float64 {
	for k := range p.start {
		if t < p.start[k]+p.dur[k] {
			x := max(t-p.start[k], 0)
			a := (p.r1[k] - p.r0[k]) / p.dur[k]
			return p.cum[k] + p.r0[k]*x + a*x*x/2
		}
	}
	return p.total
}

func (p rampProfile) at(u float64) (time.Duration, bool) {
	if u < 0 || u > p.total {
		return 0, false
	}
	for k := range p.start {
		end := p.total
		if k+1 < len(p.cum) {
			end = p.cum[k+1]
		}
		if u > end || end == p.cum[k] {
			continue
		}
		// Solve r0·τ + a·τ²/2 = x for τ ≥ 0, in the form that is stable
		// for a = 0 and for r0 = 0: τ = 2x / (r0 + √(r0² + 2ax)).
		x := u - p.cum[k]
		a := (p.r1[k] - p.r0[k]) / p.dur[k]
		tau := 0.0
		if x > 0 {
			tau = 2 * x / (p.r0[k] + math.Sqrt(max(p.r0[k]*p.r0[k]+2*a*x, 0)))
		}
		return time.Duration(math.Round((p.start[k] + min(tau, p.dur[k])) * 1e9)), true
	}
	return 0, false
}

// duration is the stages' total length.
func (p rampProfile) duration() time.Duration {
	if len(p.start) == 0 {
		return 0
	}
	last := len(p.start) - 1
	return time.Duration(math.Round((p.start[last] + p.dur[last]) * 1e9))
}
