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
	}{
		{"passes at once", time.Minute, 0, []sample{quiet}, 1, 1, false, false},
		{"missed while busy, then passed", time.Minute, 0, []sample{busy, busy, quiet}, 3, 3, false, false},
		{"missed on a quiet machine", time.Minute, 0, []sample{quiet, busy}, 0, 1, true, false},
		{"missed while busy, then on a quiet machine", time.Minute, 0, []sample{busy, quiet, quiet}, 0, 2, true, false},
		{"missed, the machine not measured", time.Minute, 0, []sample{unmeasured, quiet}, 0, 1, true, false},
		{"busy past the bound: inconclusive", 0, 0, []sample{busy, busy}, 0, 1, false, true},
		{"a quiet miss allowed, then passed", time.Minute, 1, []sample{quiet, quiet}, 2, 2, false, false},
		{"quiet misses past those allowed", time.Minute, 2, []sample{quiet, busy, quiet, quiet}, 0, 4, true, false},
		{"exactly BusyShare counts as quiet", time.Minute, 0, []sample{{BusyShare, true}, busy}, 0, 1, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &failures{}
			watched := 0
			r := Retry{Within: tt.within, QuietMisses: tt.quietOK, watch: func() func() (float64, bool) {
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
