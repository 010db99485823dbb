package capacity

import (
	"math"
	"testing"

	"github.com/llmbench-org/llmbench/internal/interval"
)

// run drives a search against an engine whose verdict at each load is
// verdict(load, attempt), and returns its result and the probes.
func run(spec Spec, verdict func(load float64, attempt int) interval.Verdict) (Result, []Probe) {
	s := NewSearch(spec)
	for range 100 {
		load, attempt, ok := s.Next()
		if !ok {
			break
		}
		s.Observe(Probe{Load: load, Attempt: attempt, Verdict: verdict(load, attempt)})
	}
	return s.Result(), s.Probes()
}

func threshold(c float64) func(float64, int) interval.Verdict {
	return func(load float64, _ int) interval.Verdict {
		if load <= c {
			return interval.Pass
		}
		return interval.Fail
	}
}

func TestSearchBracketsEveryCapacity(t *testing.T) {
	spec := Spec{Min: 1, Max: 64, Tolerance: 0.10, MaxProbes: 8}
	for c := 1.05; c < 64; c *= 1.07 {
		res, probes := run(spec, threshold(c))
		if res.Status != Bracketed {
			t.Fatalf("capacity %.3f: status %s after %v", c, res.Status, probes)
		}
		if !(res.Lo <= c && c < res.Hi) || res.Hi > res.Lo*1.10+1e-9 || res.Capacity != res.Lo {
			t.Errorf("capacity %.3f: result %+v, want a bracket [pass, fail) around it no wider than 10%%", c, res)
		}
		for _, p := range probes {
			if p.Load != roundSignificant(p.Load, 3) {
				t.Errorf("capacity %.3f: probed %v, want three significant digits", c, p.Load)
			}
		}
		if len(probes) > 7 {
			t.Errorf("capacity %.3f: %d probes, want at most 7 (log-bisection of 1..64 to 10%%)", c, len(probes))
		}
	}
}

func TestSearchEnds(t *testing.T) {
	spec := Spec{Min: 2, Max: 32, Tolerance: 0.10, MaxProbes: 8}
	res, probes := run(spec, threshold(100))
	if res.Status != AtLeastMax || res.Capacity != 32 || !math.IsInf(res.Hi, 1) || probes[len(probes)-1].Load != 32 {
		t.Errorf("everything passes: %+v after %v, want at_least_max with 32 probed", res, probes)
	}
	res, probes = run(spec, threshold(1))
	if res.Status != BelowMin || res.Capacity != 0 || res.Hi != 2 || probes[len(probes)-1].Load != 2 {
		t.Errorf("everything fails: %+v after %v, want below_min with 2 probed", res, probes)
	}
}

func TestSearchReprobesInconclusive(t *testing.T) {
	spec := Spec{Min: 1, Max: 64, Tolerance: 0.10, MaxProbes: 12}
	c := 10.0
	// Within 20 % of the capacity the first attempt cannot tell; the longer
	// second one can.
	v := func(load float64, attempt int) interval.Verdict {
		if attempt == 1 && math.Abs(load/c-1) < 0.2 {
			return interval.Inconclusive
		}
		return threshold(c)(load, attempt)
	}
	res, probes := run(spec, v)
	if res.Status != Bracketed || !(res.Lo <= c && c < res.Hi) {
		t.Fatalf("result %+v after %v", res, probes)
	}
	reprobed := 0
	for i, p := range probes {
		if p.Attempt == 2 {
			reprobed++
			if i == 0 || probes[i-1].Load != p.Load || probes[i-1].Verdict != interval.Inconclusive {
				t.Errorf("probe %d %+v: a second attempt must follow an inconclusive first at the same load", i, p)
			}
		}
	}
	if reprobed == 0 {
		t.Errorf("no re-probe in %v", probes)
	}

	// Inconclusive twice counts as a fail: the capacity is never overstated.
	always := func(load float64, attempt int) interval.Verdict {
		if math.Abs(load/c-1) < 0.2 {
			return interval.Inconclusive
		}
		return threshold(c)(load, attempt)
	}
	res, probes = run(spec, always)
	if res.Capacity > c*0.8+1e-9 {
		t.Errorf("inconclusive near %g: capacity %g (%v), want at most the last load that passed", c, res.Capacity, probes)
	}
}

func TestSearchBudget(t *testing.T) {
	spec := Spec{Min: 1, Max: 1000, Tolerance: 0.01, MaxProbes: 4}
	res, probes := run(spec, threshold(37))
	if len(probes) != 4 || res.Status != OutOfProbes || !(res.Lo <= 37 && 37 < res.Hi) {
		t.Errorf("result %+v after %v, want 4 probes, out_of_probes, bracket around 37", res, probes)
	}
}

func TestSearchIntegers(t *testing.T) {
	spec := Spec{Min: 1, Max: 256, Tolerance: 0.10, MaxProbes: 10, Integer: true}
	for _, c := range []float64{1, 3, 7, 10, 11, 50, 255} {
		res, probes := run(spec, threshold(c))
		for _, p := range probes {
			if p.Load != math.Round(p.Load) {
				t.Errorf("capacity %g: probed %g users", c, p.Load)
			}
		}
		if res.Capacity != math.Floor(c) && res.Hi > res.Lo*1.1+1e-9 && res.Hi-res.Lo > 1 {
			t.Errorf("capacity %g: %+v after %v", c, res, probes)
		}
		if !(res.Lo <= c && c < res.Hi) {
			t.Errorf("capacity %g: %+v after %v, want it bracketed", c, res, probes)
		}
	}
}

// A pass above a fail (noise) does not move the bracket up past the fail.
func TestSearchNotMonotone(t *testing.T) {
	s := NewSearch(Spec{Min: 1, Max: 64, Tolerance: 0.1, MaxProbes: 8})
	s.Observe(Probe{Load: 8, Attempt: 1, Verdict: interval.Fail})
	s.Observe(Probe{Load: 16, Attempt: 1, Verdict: interval.Pass})
	if pass, fail := s.bracket(); pass != 0 || fail != 8 {
		t.Errorf("bracket (%g, %g), want (0, 8)", pass, fail)
	}
}
