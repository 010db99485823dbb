package workload

import (
	"math/rand/v2"
	"time"
)

// A closed-loop user whose request could not reach the engine (refused,
// reset before any response byte) or was told the engine is unavailable
// (503) waits before its next one, longer after each such failure in a
// row, instead of retrying at once: four users against an engine down for
// 200 ms sent 2,841 failed requests in 7 s (issue 21). The first success
// ends the back-off. Open-loop arrivals keep their schedule: each fails
// once (docs/decisions/0044).
const (
	BackoffBase = 50 * time.Millisecond // the wait after the first failure in a row
	BackoffCap  = time.Second           // no wait is longer
)

// BackoffDelay is the wait after the k-th failure in a row (k >= 1) before
// jitter: BackoffBase doubled k-1 times, at most BackoffCap; 0 for k <= 0.
func BackoffDelay(k int) time.Duration {
	if k <= 0 {
		return 0
	}
	d := BackoffBase
	for i := 1; i < k && d < BackoffCap; i++ {
		d *= 2
	}
	return min(d, BackoffCap)
}

// backoff is one user's state: its failures in a row, and its jitter drawn
// from the scenario's seed (a rerun waits the same).
type backoff struct {
	fails int
	rng   *rand.Rand
}

func newBackoff(seed int64, phase, user int) *backoff {
	return &backoff{rng: newRand(seed, streamBackoff, uint64(phase)<<32|uint64(user))}
}

// after takes a request's outcome into account.
func (b *backoff) after(o Outcome) {
	switch {
	case o.Canceled:
	case o.Unreachable || o.Unavailable:
		b.fails++
	default:
		b.fails = 0
	}
}

// wait is how long to wait before the next request: 0 unless the last ones
// failed as unreachable or unavailable; else the delay for their number,
// jittered to between half and all of it so that users that failed
// together do not come back together (and every wait is at least half the
// delay, which bounds the attempts an outage costs).
func (b *backoff) wait() time.Duration {
	d := BackoffDelay(b.fails)
	if d == 0 {
		return 0
	}
	return d/2 + time.Duration(b.rng.Int64N(int64(d/2)+1))
}
