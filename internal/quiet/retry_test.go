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
	errors, logs []string
}

func (f *failures) Helper() {}
func (f *failures) Errorf(format string, a ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, a...))
}
func (f *failures) Logf(format string, a ...any) { f.logs = append(f.logs, fmt.Sprintf(format, a...)) }

// Retry runs an attempt again only when it missed on a busy machine, and
// fails at the first miss on a quiet one, one the platform cannot measure,
// or when the machine stays busy past Within.
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
		machine  []sample // per attempt
		passesAt int      // the attempt that passes (0: none)
		attempts int
		fails    bool
	}{
		{"passes at once", time.Minute, []sample{quiet}, 1, 1, false},
		{"missed while busy, then passed", time.Minute, []sample{busy, busy, quiet}, 3, 3, false},
		{"missed on a quiet machine", time.Minute, []sample{quiet, busy}, 0, 1, true},
		{"missed while busy, then on a quiet machine", time.Minute, []sample{busy, quiet, quiet}, 0, 2, true},
		{"missed, the machine not measured", time.Minute, []sample{unmeasured, quiet}, 0, 1, true},
		{"busy past the bound", 0, []sample{busy, busy}, 0, 1, true},
		{"exactly BusyShare counts as quiet", time.Minute, []sample{{BusyShare, true}, busy}, 0, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := &failures{}
			watched := 0
			r := Retry{Within: tt.within, watch: func() func() (float64, bool) {
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
			if attempts != tt.attempts || (len(f.errors) > 0) != tt.fails {
				t.Errorf("%d attempts, errors %q; want %d attempts, failed %v (logs %q)", attempts, f.errors, tt.attempts, tt.fails, f.logs)
			}
			if tt.fails && !strings.Contains(strings.Join(f.errors, "\n"), "capacity 12.1/s") {
				t.Errorf("the failure does not say what missed: %q", f.errors)
			}
		})
	}
}
