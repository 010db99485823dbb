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

var (
	_ Pacer = constantPacer(0)
	_ Pacer = (*renewalPacer)(nil)
)

// Constant returns arrivals exactly 1/rate apart, the first at 0.
// A rate ≤ 0 has no arrivals.
func Constant(rate float64) Pacer { return constantPacer(rate) }

type constantPacer float64

func (c constantPacer) Offset(n int) (time.Duration, bool) {
	if c <= 0 || n < 0 {
		return 0, false
	}
	// n·1e9 is exact below 2^53, so whole-nanosecond periods stay exact.
	return time.Duration(math.Round(float64(n) * 1e9 / float64(c))), true
}

// Poisson returns a Poisson process of the given rate: independent
// exponential gaps with mean 1/rate, drawn from a stream seeded by seed. The
// first arrival is at 0, like the first request of vLLM's bench serve.
func Poisson(rate float64, seed uint64) Pacer {
	return newRenewal(rate, seed, func(rng *rand.Rand) float64 { return rng.ExpFloat64() })
}

// renewalPacer is a renewal process: arrival n is at the sum of n i.i.d. gaps
// of mean 1/rate. The gaps are drawn in order from a seeded stream; a cursor
// makes the usual in-order access O(1) per arrival, and asking for an earlier
// arrival replays the stream from the start, so the answer never depends on
// the order of calls.
type renewalPacer struct {
	rate float64
	seed uint64
	gap  func(*rand.Rand) float64 // a gap with mean 1

	mu  sync.Mutex
	rng *rand.Rand
	n   int     // arrivals the cursor has passed
	at  float64 // offset of arrival n in units of mean gaps
}

func newRenewal(rate float64, seed uint64, gap func(*rand.Rand) float64) *renewalPacer {
	return &renewalPacer{rate: rate, seed: seed, gap: gap}
}

func (p *renewalPacer) Offset(n int) (time.Duration, bool) {
	if p.rate <= 0 || n < 0 {
		return 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rng == nil || n < p.n {
		p.rng = rand.New(rand.NewPCG(p.seed, mix(p.seed)))
		p.n, p.at = 0, 0
	}
	for p.n < n {
		p.at += p.gap(p.rng)
		p.n++
	}
	return time.Duration(math.Round(p.at * 1e9 / p.rate)), true
}
