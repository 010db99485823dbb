package capacity

import (
	"math"

	"github.com/llmbench-org/llmbench/internal/interval"
)

// Spec is what a search may do: probe loads in [Min, Max], stop once the
// bracket [largest pass, smallest fail] is no wider than Tolerance (relative:
// fail ≤ pass × (1+Tolerance)), and never run more than MaxProbes probes.
type Spec struct {
	Min, Max  float64
	Tolerance float64
	MaxProbes int
	// Integer loads only (closed-loop users): the bracket also closes when
	// no whole number lies strictly inside it.
	Integer bool
}

// Probe is one finished probe.
type Probe struct {
	Load    float64
	Attempt int // 1; 2 for the longer re-probe of an inconclusive first attempt
	Verdict interval.Verdict
}

// Search is the state of one capacity search: the probes so far. Next says
// what to probe; Observe records what a probe found.
type Search struct {
	spec   Spec
	probes []Probe
}

// NewSearch starts a search of spec.
func NewSearch(spec Spec) *Search { return &Search{spec: spec} }

// Observe records a finished probe.
func (s *Search) Observe(p Probe) { s.probes = append(s.probes, p) }

// Probes are the probes observed, in order.
func (s *Search) Probes() []Probe { return append([]Probe(nil), s.probes...) }

// Next is the next probe's load and attempt, or ok false when the search is
// over: bracketed to the tolerance, pinned at an end of [Min, Max], or out
// of probes.
//
// The first probe is the geometric middle of [Min, Max]; each later one
// bisects, in log space, the bracket between the largest load that passed
// (Min until one has) and the smallest that failed (Max until one has), so
// ⌈log2(ln(Max/Min)/ln(1+Tolerance))⌉ decided probes close any bracket. An
// end of the range is probed only when the bracket has shrunk onto it, to
// confirm that the capacity lies beyond it. An inconclusive probe is probed
// once more at the same load for twice as long; inconclusive again, it
// counts as a fail (the capacity is never overstated).
func (s *Search) Next() (load float64, attempt int, ok bool) {
	if len(s.probes) >= s.spec.MaxProbes {
		return 0, 0, false
	}
	if n := len(s.probes); n > 0 {
		last := s.probes[n-1]
		if last.Verdict == interval.Inconclusive && last.Attempt < 2 {
			return last.Load, last.Attempt + 1, true
		}
	}
	pass, fail := s.bracket()
	lo, hi := s.spec.Min, s.spec.Max
	switch {
	case pass >= s.spec.Max:
		return 0, 0, false // at least Max
	case fail <= s.spec.Min:
		return 0, 0, false // below Min
	}
	if pass > 0 {
		lo = pass
	}
	if !math.IsInf(fail, 1) {
		hi = fail
	}
	if s.closed(lo, hi) {
		switch {
		case pass == 0 && !math.IsInf(fail, 1) && !s.probed(s.spec.Min):
			return s.spec.Min, 1, true // confirm the bottom end passes
		case math.IsInf(fail, 1) && pass > 0 && !s.probed(s.spec.Max):
			return s.spec.Max, 1, true // confirm the top end
		case pass == 0 && math.IsInf(fail, 1): // Min and Max within the tolerance: probe the top
			return s.spec.Max, 1, true
		}
		return 0, 0, false
	}
	mid := math.Sqrt(lo * hi)
	switch {
	case s.spec.Integer:
		mid = math.Round(mid)
		mid = max(lo+1, min(hi-1, mid))
	default:
		// Three significant digits name a load as people write one (phase
		// search-rate-13 rather than -13.007), and stay strictly inside.
		if r := roundSignificant(mid, 3); r > lo && r < hi {
			mid = r
		}
	}
	return mid, 1, true
}

func roundSignificant(v float64, digits int) float64 {
	if v <= 0 {
		return v
	}
	scale := math.Pow(10, float64(digits)-math.Ceil(math.Log10(v)))
	return math.Round(v*scale) / scale
}

// closed reports whether [lo, hi] is within the tolerance (or, for whole
// loads, holds no whole number strictly inside).
func (s *Search) closed(lo, hi float64) bool {
	if s.spec.Integer && hi-lo <= 1 {
		return true
	}
	return hi <= lo*(1+s.spec.Tolerance)
}

func (s *Search) probed(load float64) bool {
	for _, p := range s.probes {
		if p.Load == load {
			return true
		}
	}
	return false
}

// bracket is the smallest load whose last attempt failed or stayed
// inconclusive after its re-probe (+Inf: none), and the largest load below
// it whose last attempt passed (0: none). A pass above a fail (noise, or an
// engine that is not monotone) does not move the bracket up.
func (s *Search) bracket() (pass, fail float64) {
	fail = math.Inf(1)
	for i, p := range s.probes {
		if s.superseded(i) {
			continue
		}
		if p.Verdict == interval.Fail || (p.Verdict == interval.Inconclusive && p.Attempt >= 2) {
			fail = min(fail, p.Load)
		}
	}
	for i, p := range s.probes {
		if !s.superseded(i) && p.Verdict == interval.Pass && p.Load < fail {
			pass = max(pass, p.Load)
		}
	}
	return pass, fail
}

// superseded reports whether a later attempt at the same load replaced probe i.
func (s *Search) superseded(i int) bool {
	for _, q := range s.probes[i+1:] {
		if q.Load == s.probes[i].Load {
			return true
		}
	}
	return false
}

// Status says how a search ended.
type Status string

const (
	Bracketed   Status = "bracketed"    // the bracket closed to the tolerance
	AtLeastMax  Status = "at_least_max" // Max passed: the capacity is Max or more
	BelowMin    Status = "below_min"    // Min failed: the capacity is below it
	OutOfProbes Status = "out_of_probes"
	Unfinished  Status = "unfinished" // the run ended before the search did
)

// Result is a search's answer: the capacity, the largest load that passed
// (0 when none did), inside its interval [Lo, Hi] = [largest pass, smallest
// fail]; Hi is +Inf when no load failed, Lo 0 when none passed.
type Result struct {
	Capacity float64
	Lo, Hi   float64
	Probes   int
	Status   Status
}

// Result is the answer from the probes so far; over says whether Next has
// said the search is over.
func (s *Search) Result() Result {
	pass, fail := s.bracket()
	r := Result{Capacity: pass, Lo: pass, Hi: fail, Probes: len(s.probes)}
	_, _, more := s.Next()
	switch {
	case pass >= s.spec.Max:
		r.Status = AtLeastMax
	case fail <= s.spec.Min:
		r.Status = BelowMin
	case more:
		r.Status = Unfinished
	case s.closed(max(pass, s.spec.Min), min(fail, s.spec.Max)):
		r.Status = Bracketed
	default:
		r.Status = OutOfProbes
	}
	return r
}
