package quiet

import (
	"sync"
	"time"
)

// BusyLong is how long the machine must have been busy in every timed
// attempt this process measured for Retry to leave a miss on a busy machine
// inconclusive at once, without running it again. Running again is for a
// neighbour that comes and goes (`go test ./...` compiling and testing the
// next packages beside this one, on a quiet machine: a minute or two);
// beside neighbours that stay (`.ci/busy-test`'s CPU hogs, other work on a
// shared machine) every attempt misses alike, and each test that waited its
// own Within made the package run past go test's 10-minute timeout (the
// run package: 320 s in one capacity-search test, retried while busy).
const BusyLong = 2 * time.Minute

// streak is how long the timed attempts of this process have found the
// machine busy, one after the other: since is the start of the first of
// them, zero when the last one found it quiet (or none was measured).
type streak struct {
	mu    sync.Mutex
	since time.Time
}

// machine is this process's streak, which every Retry and Observe share:
// a test binary's timed checks all watch the same machine.
var machine = &streak{}

// observe records an attempt that began at began and found the machine busy
// or not.
func (s *streak) observe(began time.Time, busy bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !busy:
		s.since = time.Time{}
	case s.since.IsZero() || began.Before(s.since):
		s.since = began
	}
}

// busyFor is how long the machine has been busy in every attempt since the
// last quiet one, at now (0: the last was quiet).
func (s *streak) busyFor(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.since.IsZero() {
		return 0
	}
	return now.Sub(s.since)
}

// Observe records a timed attempt that a test runs in a loop of its own
// (not Retry): it began at began and other processes used share of the
// machine during it (measured false: the platform does not say, and
// nothing is recorded).
func Observe(began time.Time, share float64, measured bool) {
	if measured {
		machine.observe(began, share > BusyShare)
	}
}

// BusyStreak is how long every timed attempt this process measured has
// found the machine busy (0 when the last one found it quiet): a loop of
// its own stops running a miss again once it reaches BusyLong, as Retry
// does.
func BusyStreak() time.Duration { return machine.busyFor(time.Now()) }
