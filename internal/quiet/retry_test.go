package quiet

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// failures records what Retry says instead of failing the test.
type failures struct {
	testing.TB
	errors, logs, skips []string
}

func (f *failures) Helper() {}
func (f *failures) Errorf(format string, a ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, a...))
}
func (f *failures) Logf(format string, a ...any) { f.logs = append(f.logs, fmt.Sprintf(format, a...)) }

// Skipf records the skip; the real one also ends the test's goroutine.
func (f *failures) Skipf(format string, a ...any) {
	f.skips = append(f.skips, fmt.Sprintf(format, a...))
}

// Retry runs an attempt again only when it missed on a busy machine (or on a
// quiet one, QuietMisses times), and fails at the first miss on a quiet one
// past those or one the platform cannot measure; a machine busy past Within
// leaves the check inconclusive.
func TestRetry(t *testing.T) {
	t.Parallel()
	type sample struct {
		others   float64
		measured bool
	}
	busy, quiet, unmeasured := sample{0.6, true}, sample{0.1, true}, sample{0, false}
	tests := []struct {
		name     string
		within   time.Duration
		quietOK  int      // QuietMisses
		machine  []sample // per attempt
		passesAt int      // the attempt that passes (0: none)
		attempts int
		fails    bool
		skipped  bool // inconclusive
		// busyFor is how long earlier attempts of the process had found
		// the machine busy when the check began (0: the last was quiet).
		busyFor time.Duration
	}{
		{"passes at once", time.Minute, 0, []sample{quiet}, 1, 1, false, false, 0},
		{"missed while busy, then passed", time.Minute, 0, []sample{busy, busy, quiet}, 3, 3, false, false, 0},
		{"missed on a quiet machine", time.Minute, 0, []sample{quiet, busy}, 0, 1, true, false, 0},
		{"missed while busy, then on a quiet machine", time.Minute, 0, []sample{busy, quiet, quiet}, 0, 2, true, false, 0},
		{"missed, the machine not measured", time.Minute, 0, []sample{unmeasured, quiet}, 0, 1, true, false, 0},
		{"busy past the bound: inconclusive", 0, 0, []sample{busy, busy}, 0, 1, false, true, 0},
		{"a quiet miss allowed, then passed", time.Minute, 1, []sample{quiet, quiet}, 2, 2, false, false, 0},
		{"quiet misses past those allowed", time.Minute, 2, []sample{quiet, busy, quiet, quiet}, 0, 4, true, false, 0},
		{"exactly BusyShare counts as quiet", time.Minute, 0, []sample{{BusyShare, true}, busy}, 0, 1, true, false, 0},
		{"busy for BusyLong in this process: inconclusive at the first miss", time.Hour, 0, []sample{busy, busy}, 0, 1, false, true, BusyLong},
		{"busy a while in this process: run again", time.Hour, 0, []sample{busy, busy, quiet}, 3, 3, false, false, BusyLong / 2},
		{"busy for long, then a quiet attempt ends the streak: its miss fails", time.Hour, 0, []sample{quiet, busy}, 0, 1, true, false, BusyLong},
		{"busy for long, unmeasured: the miss fails", time.Hour, 0, []sample{unmeasured, busy}, 0, 1, true, false, BusyLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &failures{}
			watched := 0
			st := &streak{}
			if tt.busyFor > 0 {
				st.observe(time.Now().Add(-tt.busyFor), true)
			}
			r := Retry{Within: tt.within, QuietMisses: tt.quietOK, streak: st, watch: func() func() (float64, bool) {
				s := tt.machine[watched]
				watched++
				return func() (float64, bool) { return s.others, s.measured }
			}}
			attempts := 0
			r.Run(f, func(n int) []string {
				attempts++
				if n != attempts {
					t.Errorf("attempt numbered %d, want %d", n, attempts)
				}
				if n == tt.passesAt {
					return nil
				}
				return []string{"capacity 12.1/s, want 15.3/s within 15 %"}
			})
			if attempts != tt.attempts || (len(f.errors) > 0) != tt.fails || (len(f.skips) > 0) != tt.skipped {
				t.Errorf("%d attempts, errors %q, skips %q; want %d attempts, failed %v, skipped %v (logs %q)",
					attempts, f.errors, f.skips, tt.attempts, tt.fails, tt.skipped, f.logs)
			}
			if tt.skipped && !strings.Contains(strings.Join(f.logs, "\n"), "capacity 12.1/s") {
				t.Errorf("an inconclusive check does not say what missed: %q", f.logs)
			}
			if tt.fails && !strings.Contains(strings.Join(f.errors, "\n"), "capacity 12.1/s") {
				t.Errorf("the failure does not say what missed: %q", f.errors)
			}
		})
	}
}

// The streak is how long attempts in a row found the machine busy: from the
// first of them, until one finds it quiet; an attempt that began earlier but
// ended later (a parallel test) moves its start back.
func TestStreak(t *testing.T) {
	t.Parallel()
	var s streak
	t0 := time.Now()
	if d := s.busyFor(t0); d != 0 {
		t.Fatalf("a new streak: busy for %v, want 0", d)
	}
	s.observe(t0, true)
	s.observe(t0.Add(time.Minute), true)
	if d := s.busyFor(t0.Add(2 * time.Minute)); d != 2*time.Minute {
		t.Errorf("busy since the first busy attempt: %v, want 2m", d)
	}
	s.observe(t0.Add(-time.Minute), true)
	if d := s.busyFor(t0.Add(2 * time.Minute)); d != 3*time.Minute {
		t.Errorf("an attempt that began earlier: %v, want 3m", d)
	}
	s.observe(t0.Add(3*time.Minute), false)
	if d := s.busyFor(t0.Add(4 * time.Minute)); d != 0 {
		t.Errorf("after a quiet attempt: busy for %v, want 0", d)
	}
	s.observe(t0.Add(5*time.Minute), true)
	if d := s.busyFor(t0.Add(6 * time.Minute)); d != time.Minute {
		t.Errorf("a new streak: %v, want 1m", d)
	}
}
