package workload

import (
	"math"
	"testing"
	"testing/quick"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestConstantPacer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rate float64
		n    int
		want time.Duration
		ok   bool
	}{
		{rate: 1, n: 0, want: 0, ok: true},
		{rate: 1, n: 1, want: time.Second, ok: true},
		{rate: 100, n: 1, want: 10 * time.Millisecond, ok: true},
		{rate: 100, n: 99, want: 990 * time.Millisecond, ok: true},
		{rate: 3, n: 1, want: 333333333, ok: true},
		{rate: 3, n: 3, want: time.Second, ok: true},
		{rate: 0.5, n: 2, want: 4 * time.Second, ok: true},
		{rate: 1e6, n: 1_000_000, want: time.Second, ok: true},
		{rate: 0, n: 0, ok: false},
		{rate: 10, n: -1, ok: false},
	}
	for _, tt := range tests {
		got, ok := Constant(tt.rate).Offset(tt.n)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Constant(%g).Offset(%d) = %v, %v; want %v, %v", tt.rate, tt.n, got, ok, tt.want, tt.ok)
		}
	}
}

// TestConstantPacerExactCount checks, as vegeta's TestAttackRate does, that
// rate r over d seconds is exactly r·d arrivals.
func TestConstantPacerExactCount(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		rate float64
		dur  time.Duration
		want int
	}{{100, time.Second, 100}, {7, 3 * time.Second, 21}, {1000, 10 * time.Second, 10000}, {0.5, 10 * time.Second, 5}} {
		p := Constant(tt.rate)
		got := 0
		for n := 0; ; n++ {
			off, ok := p.Offset(n)
			if !ok || off >= tt.dur {
				break
			}
			got++
		}
		if got != tt.want {
			t.Errorf("Constant(%g) over %v: %d arrivals, want %d", tt.rate, tt.dur, got, tt.want)
		}
	}
}

// gapStats returns the mean and coefficient of variation of the first n gaps.
func gapStats(t *testing.T, p Pacer, n int) (mean, cv float64) {
	t.Helper()
	var sum, sumSq float64
	prev := time.Duration(0)
	for i := 1; i <= n; i++ {
		off, ok := p.Offset(i)
		if !ok {
			t.Fatalf("no arrival %d", i)
		}
		g := (off - prev).Seconds()
		prev = off
		sum += g
		sumSq += g * g
	}
	mean = sum / float64(n)
	variance := sumSq/float64(n) - mean*mean
	return mean, math.Sqrt(variance) / mean
}

func TestPoissonMeanAndCV(t *testing.T) {
	t.Parallel()
	// Over 10,000 exponential gaps the relative standard error of the mean is
	// 1/√n = 1 % and that of the CV about 1 %; 3 % is three standard errors.
	const n, tol = 10_000, 0.03
	for _, rate := range []float64{0.5, 10, 250} {
		for seed := range uint64(5) {
			mean, cv := gapStats(t, Poisson(rate, seed), n)
			if math.Abs(mean*rate-1) > tol {
				t.Errorf("Poisson(%g, seed %d): mean gap %.5fs, want %.5fs ±%g%%", rate, seed, mean, 1/rate, tol*100)
			}
			if math.Abs(cv-1) > tol {
				t.Errorf("Poisson(%g, seed %d): CV %.4f, want 1 ±%g", rate, seed, cv, tol)
			}
		}
	}
}

func TestPoissonSameSeedSameOffsets(t *testing.T) {
	t.Parallel()
	a, b, other := Poisson(20, 7), Poisson(20, 7), Poisson(20, 8)
	differ := false
	for n := range 1000 {
		x, _ := a.Offset(n)
		y, _ := b.Offset(n)
		z, _ := other.Offset(n)
		if x != y {
			t.Fatalf("same seed: offset %d is %v and %v", n, x, y)
		}
		differ = differ || x != z
	}
	if !differ {
		t.Error("seeds 7 and 8 gave the same 1000 offsets")
	}
}

// TestPoissonIsPure checks that the answer for n does not depend on what was
// asked before: random access equals in-order access.
func TestPoissonIsPure(t *testing.T) {
	t.Parallel()
	inOrder := Poisson(5, 3)
	want := make([]time.Duration, 500)
	for n := range want {
		want[n], _ = inOrder.Offset(n)
	}
	shuffled := Poisson(5, 3)
	f := func(n uint16) bool {
		i := int(n) % len(want)
		got, ok := shuffled.Offset(i)
		return ok && got == want[i]
	}
	if err := quick.Check(f, nil); err != nil {
		t.Error(err)
	}
}

func TestPacersAreMonotonic(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]Pacer{"constant": Constant(33), "poisson": Poisson(33, 1)} {
		prev := time.Duration(-1)
		for n := range 5000 {
			off, ok := p.Offset(n)
			if !ok || off < prev {
				t.Fatalf("%s: offset %d = %v (ok %v) after %v", name, n, off, ok, prev)
			}
			prev = off
		}
	}
}

func TestGammaMeanAndCV(t *testing.T) {
	t.Parallel()
	// 20,000 gaps per seed. For exponential gaps the sample mean and CV have
	// relative standard errors near 0.7 %; burstier gaps (larger CV, heavier
	// tails) have larger ones, so the 3 % tolerance scales with the CV.
	const n = 20_000
	for _, cv := range []float64{0.25, 0.5, 1, 2, 3} {
		for seed := range uint64(3) {
			mean, got := gapStats(t, Gamma(40, cv, seed), n)
			tol := 0.03 * math.Max(1, cv)
			if math.Abs(mean*40-1) > tol {
				t.Errorf("Gamma(40, cv %g, seed %d): mean gap %.5fs, want %.5fs", cv, seed, mean, 1/40.0)
			}
			if math.Abs(got/cv-1) > tol {
				t.Errorf("Gamma(40, cv %g, seed %d): CV %.4f, want %g ±%.0f%%", cv, seed, got, cv, tol*100)
			}
		}
	}
}

func TestGammaCV1IsPoissonLike(t *testing.T) {
	t.Parallel()
	_, cv := gapStats(t, Gamma(10, 1, 42), 10_000)
	if math.Abs(cv-1) > 0.03 {
		t.Errorf("gamma with cv 1: CV %.4f, want 1", cv)
	}
}

// countBefore counts a pacer's arrivals before t.
func countBefore(p Pacer, t time.Duration) int {
	n := 0
	for {
		off, ok := p.Offset(n)
		if !ok || off >= t {
			return n
		}
		n++
	}
}

// TestRampIntegratedCounts checks that constant-spaced arrivals through a
// ramp number exactly ⌈Λ(t)⌉ before t, Λ being the integrated rate.
func TestRampIntegratedCounts(t *testing.T) {
	t.Parallel()
	stages := []RateStage{
		{Duration: 10 * time.Second, Rate: 20}, // 0 → 20/s: Λ(10s) = 100
		{Duration: 20 * time.Second, Rate: 20}, // hold: +400
		{Duration: 0, Rate: 5},                 // jump down
		{Duration: 8 * time.Second, Rate: 45},  // 5 → 45/s: +200
		{Duration: 4 * time.Second, Rate: 0},   // 45 → 0: +90
	}
	prof := newRampProfile(stages)
	p := Ramp(stages, Arrival{Process: "constant"}, 1)
	if got := prof.total; got != 790 {
		t.Fatalf("Λ at the end = %g, want 790", got)
	}
	for _, at := range []time.Duration{
		0, 1500 * time.Millisecond, 5 * time.Second, 9999 * time.Millisecond, 10 * time.Second,
		17*time.Second + 250*time.Millisecond, 30 * time.Second, 33333 * time.Millisecond, 38 * time.Second, 41 * time.Second, 41999 * time.Millisecond,
	} {
		lambda := prof.integral(at.Seconds())
		want := int(math.Ceil(lambda - 1e-9))
		if got := countBefore(p, at); got != want {
			t.Errorf("arrivals before %v: %d, want ⌈Λ⌉ = ⌈%.4f⌉ = %d", at, got, lambda, want)
		}
	}
	if got := countBefore(p, time.Hour); got != 791 {
		t.Errorf("arrivals in the whole ramp: %d, want 791 (0 through Λ = 790)", got)
	}
	if d := prof.duration(); d != 42*time.Second {
		t.Errorf("ramp lasts %v, want 42s", d)
	}
}

// TestPoissonRampCounts checks a Poisson ramp's counts against Λ within
// four standard deviations (√Λ), over several seeds, without sleeping.
func TestPoissonRampCounts(t *testing.T) {
	t.Parallel()
	stages := []RateStage{{Duration: 60 * time.Second, Rate: 100}, {Duration: 60 * time.Second, Rate: 100}}
	prof := newRampProfile(stages)
	for _, arr := range []Arrival{{Process: "poisson"}, {Process: "gamma", CV: 0.5}} {
		for seed := range uint64(4) {
			p := Ramp(stages, arr, seed)
			for _, at := range []time.Duration{20 * time.Second, 60 * time.Second, 90 * time.Second, 120 * time.Second} {
				lambda := prof.integral(at.Seconds())
				got := float64(countBefore(p, at))
				if math.Abs(got-lambda) > 4*math.Sqrt(lambda) {
					t.Errorf("%s seed %d: %g arrivals before %v, want %.0f ± %.0f", arr.Process, seed, got, at, lambda, 4*math.Sqrt(lambda))
				}
			}
		}
	}
}

func TestRampStartingAtRateZero(t *testing.T) {
	t.Parallel()
	// 0 → 10/s over 2 s: Λ(t) = 2.5t², so arrival n is at √(n/2.5) s.
	p := Ramp([]RateStage{{Duration: 2 * time.Second, Rate: 10}}, Arrival{Process: "constant"}, 0)
	for n, want := range []float64{0, math.Sqrt(1 / 2.5), math.Sqrt(2 / 2.5), math.Sqrt(3 / 2.5), math.Sqrt(4 / 2.5)} {
		off, ok := p.Offset(n)
		if !ok || math.Abs(off.Seconds()-want) > 1e-9 {
			t.Errorf("arrival %d at %v (%v), want %.9fs", n, off, ok, want)
		}
	}
	if _, ok := p.Offset(11); ok {
		t.Error("a ramp to 10/s over 2 s has arrivals 0..10 only")
	}
}

func TestReplay(t *testing.T) {
	t.Parallel()
	p := Replay([]time.Duration{0, time.Second, time.Second, 3 * time.Second})
	for n, want := range []time.Duration{0, time.Second, time.Second, 3 * time.Second} {
		if got, ok := p.Offset(n); !ok || got != want {
			t.Errorf("Offset(%d) = %v, %v; want %v", n, got, ok, want)
		}
	}
	if _, ok := p.Offset(4); ok {
		t.Error("Offset past the trace returned an arrival")
	}
}

func TestRenewalPacersArePure(t *testing.T) {
	t.Parallel()
	for name, mk := range map[string]func() Pacer{
		"gamma": func() Pacer { return Gamma(5, 2, 9) },
		"ramp":  func() Pacer { return Ramp([]RateStage{{time.Minute, 30}}, Arrival{Process: "poisson"}, 9) },
	} {
		inOrder, random := mk(), mk()
		want := make([]time.Duration, 300)
		for n := range want {
			want[n], _ = inOrder.Offset(n)
		}
		for _, n := range []int{299, 3, 150, 0, 298, 1} {
			if got, _ := random.Offset(n); got != want[n] {
				t.Errorf("%s: Offset(%d) = %v after other calls, want %v", name, n, got, want[n])
			}
		}
	}
}

func TestUserLevels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		stages []ConcurrencyStage
		want   []LevelChange
	}{
		{"jump and hold", []ConcurrencyStage{{0, 4}, {10 * time.Second, 4}}, []LevelChange{{0, 4}}},
		{"ramp up", []ConcurrencyStage{{4 * time.Second, 4}}, []LevelChange{{0, 0}, {time.Second, 1}, {2 * time.Second, 2}, {3 * time.Second, 3}, {4 * time.Second, 4}}},
		{"up then down", []ConcurrencyStage{{2 * time.Second, 2}, {time.Second, 2}, {2 * time.Second, 0}},
			[]LevelChange{{0, 0}, {time.Second, 1}, {2 * time.Second, 2}, {4 * time.Second, 1}, {5 * time.Second, 0}}},
		{"jump mid-way", []ConcurrencyStage{{time.Second, 1}, {0, 8}, {time.Second, 8}}, []LevelChange{{0, 0}, {time.Second, 8}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, UserLevels(tt.stages)); diff != "" {
				t.Errorf("UserLevels (-want +got):\n%s", diff)
			}
		})
	}
}
