package quiet

import (
	"fmt"
	"testing"
	"time"
)

// BusyShare is how much of the machine (0–1, all cores) other processes must
// have used during an attempt for Retry to put its miss down to them.
const BusyShare = 0.25

// Retry runs a check that measures in real time (a capacity, a latency
// bound) until it passes, telling a miss of llmbench's from one of the
// machine's: `go test ./...` on a small machine compiles and links the next
// packages beside the one that runs, and a check that holds on a quiet
// machine can miss beside them. Each attempt is watched (WatchNeighbours).
// A miss while other processes used more than BusyShare of the machine is
// run again, until Within has passed since the first attempt; a miss on a
// quiet machine, or where the platform does not say, fails the test. The
// check's bounds stay what they are: a systematic error misses on a quiet
// machine and fails.
//
// A machine that stayed busy for all of Within leaves the check
// inconclusive, as llmbench's own gate is when the host delayed the client:
// neither "llmbench missed" nor "llmbench held" can be said, so the test is
// skipped (t.Skip), saying why and what missed. What each attempt checks
// exactly (counts, tokens) fails the test whenever it fails, skip or not;
// a test must keep nothing after Run, which a skip does not reach. On a
// machine others keep busy throughout (`.ci/busy-test`'s CPU hogs beside go
// test), real-time bounds are decided on a quiet one only. So is a miss on a
// machine that every timed attempt of this process has found busy for
// BusyLong (the streak, shared by every Retry and Observe of the test
// binary): it is inconclusive at once, not run again until Within has
// passed, since an attempt that the same neighbours slow down decides
// nothing more.
type Retry struct {
	Within time.Duration
	// Children counts the CPU of this process's children that ended during
	// an attempt as the test's own (ShareBesidesChildren): a check whose
	// engine runs apart, in a child process it stops before the attempt
	// returns, must not take its own engine for a neighbour.
	Children bool
	// QuietMisses is how many misses on a quiet machine are run again
	// before one fails the test (0: the first fails). A tail bound (a p99
	// of a few hundred requests) can miss once in a while on a quiet
	// machine from one scheduling hiccup; a systematic error misses every
	// attempt and still fails.
	QuietMisses int

	// watch replaces WatchNeighbours, and streak the process's streak, in
	// the tests of Retry itself.
	watch  func() (share func() (float64, bool))
	streak *streak
}

// Run runs attempt (n counts from 1) until it returns no misses or t fails;
// misses are what the attempt found out of bounds, one line each.
func (r Retry) Run(t testing.TB, attempt func(n int) (misses []string)) {
	t.Helper()
	watch := r.watch
	if watch == nil {
		watch = func() func() (float64, bool) {
			w := WatchNeighbours()
			if r.Children {
				return w.ShareBesidesChildren
			}
			return w.Share
		}
	}
	st := r.streak
	if st == nil {
		st = machine
	}
	until := time.Now().Add(r.Within)
	quietMissed := 0
	for n := 1; ; n++ {
		began := time.Now()
		share := watch()
		misses := attempt(n)
		others, measured := share()
		if measured {
			st.observe(began, others > BusyShare)
		}
		if len(misses) == 0 {
			if measured {
				t.Logf("attempt %d passed, other processes using %.0f%% of the machine", n, 100*others)
			}
			return
		}
		var why string
		switch {
		case !measured:
			why = "other processes' use of the machine is not measured here, so the miss counts"
		case others <= BusyShare:
			why = "the machine was quiet"
		case time.Now().After(until) || st.busyFor(time.Now()) >= BusyLong:
			t.Logf("attempt %d missed while other processes used %.0f%% of the machine:", n, 100*others)
			for _, m := range misses {
				t.Logf("  %s", m)
			}
			busy := fmt.Sprintf("in every attempt for %v (%d attempts)", r.Within, n)
			if !time.Now().After(until) {
				busy = fmt.Sprintf("in every timed attempt of this process for %v (this check's attempts: %d): running again beside the same neighbours would decide nothing more", st.busyFor(time.Now()).Round(time.Second), n)
			}
			t.Skipf("inconclusive: other processes used more than %.0f%% of the machine %s, so a miss could be theirs; the real-time bounds are decided on a quiet machine", 100*BusyShare, busy)
			return
		default:
			t.Logf("attempt %d missed while other processes used %.0f%% of the machine (more than %.0f%%), running again:", n, 100*others, 100*BusyShare)
			for _, m := range misses {
				t.Logf("  %s", m)
			}
			continue
		}
		if quietMissed < r.QuietMisses {
			quietMissed++
			t.Logf("attempt %d missed, other processes using %.0f%% of the machine (%s); quiet miss %d of the %d allowed, running again:", n, 100*others, why, quietMissed, r.QuietMisses)
			for _, m := range misses {
				t.Logf("  %s", m)
			}
			continue
		}
		t.Errorf("attempt %d missed, other processes using %.0f%% of the machine (%s):", n, 100*others, why)
		for _, m := range misses {
			t.Errorf("  %s", m)
		}
		return
	}
}
