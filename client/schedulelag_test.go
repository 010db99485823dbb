package client

import (
	"testing"
	"time"
)

// TestScheduleLagClosedLoopIsZero: a closed-loop request (no Intended) has no
// schedule, so its lag is 0 whatever its send time; an open-loop one lags by
// Sent − Intended, early as negative (consumers clamp).
func TestScheduleLagClosedLoopIsZero(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		name           string
		intended, sent time.Duration
		scheduled      bool
		lag            time.Duration
	}{
		{"closed loop, sent late in the run", 0, 949 * time.Second, false, 0},
		{"closed loop, never sent", 0, 0, false, 0},
		{"open loop, late", 8 * ms, 10 * ms, true, 2 * ms},
		{"open loop, early", 50 * ms, 49 * ms, true, -ms},
	} {
		r := Record{Intended: c.intended, Sent: c.sent}
		if got := r.Scheduled(); got != c.scheduled {
			t.Errorf("%s: Scheduled() = %v, want %v", c.name, got, c.scheduled)
		}
		if got := r.ScheduleLag(); got != c.lag {
			t.Errorf("%s: ScheduleLag() = %v, want %v", c.name, got, c.lag)
		}
	}
}
