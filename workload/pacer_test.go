package workload

import (
	"math"
	"testing"
	"testing/quick"
	"time"
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
