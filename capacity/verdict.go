// Package capacity answers "how much load does this deployment serve within
// its SLO?": the three-valued SLO verdict of one stretch of load (a probe, a
// phase that runs until decided) from its requests, and the search that
// brackets and bisects the offered load to the largest one whose verdict
// passes (docs/decisions/0040).
//
// It is pure: it sends nothing and reads no clock. The run stage feeds it the
// finished requests and drives the probes it asks for; the report recomputes
// the same verdicts from the recorded requests, so what the run decided and
// what the report says never disagree.
package capacity

import (
	"fmt"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/interval"
	"github.com/llmbench-org/llmbench/rundir"
)

// DefaultTarget is the fraction of requests that must be good when an SLO
// does not say (the "p99" of a latency bound).
const DefaultTarget = 0.99

// InterimConfidence is the confidence of the looks a phase that runs until
// decided takes while it runs: repeated looks at the 95 % interval would end
// a phase on a chance excursion more often than one time in twenty, so the
// interim looks ask for 99 % and the final verdict, on every request, is
// taken at interval.Confidence.
const InterimConfidence = 0.99

// Objective is an SLO as a decision: a request is good when it succeeded
// within every bound of SLO, and the objective holds when at least Target of
// the requests are good.
type Objective struct {
	SLO    rundir.SLO
	Target float64 // in (0, 1]; 0 = DefaultTarget
}

func (o Objective) target() float64 {
	if o.Target <= 0 {
		return DefaultTarget
	}
	return o.Target
}

// Tally counts a stretch of requests against an objective.
type Tally struct {
	Judged int // requests counted: succeeded or failed (a failure is not good)
	Good   int // of them, succeeded within every bound
	// Unmeasured are successful requests missing no bound that could not be
	// measured against one (not streamed): counted neither way.
	Unmeasured int
}

// Add counts r. A request the run itself cancelled (an interrupt) is not
// the engine's doing and is left out.
func (t *Tally) Add(slo rundir.SLO, r *client.Record) {
	if r.ErrorClass == client.ErrCanceled {
		return
	}
	good, unmeasured := slo.Judge(r)
	switch {
	case unmeasured:
		t.Unmeasured++
	case good:
		t.Judged++
		t.Good++
	default:
		t.Judged++
	}
}

// Decision is an objective's verdict on a tally.
type Decision struct {
	Verdict  interval.Verdict  `json:"verdict"`
	Fraction float64           `json:"good_fraction"` // good of judged (0 when none)
	Interval interval.Interval `json:"-"`             // Wilson interval of the good fraction
	Target   float64           `json:"target"`
	Judged   int               `json:"judged"`
	Good     int               `json:"good"`
}

// Decide is the verdict of the tally at confidence conf: pass when the whole
// Wilson interval of the good fraction is at or above the target, fail when
// all of it is below, inconclusive otherwise (and with no request judged).
func (o Objective) Decide(t Tally, conf float64) Decision {
	target := o.target()
	iv := interval.Proportion(t.Good, t.Judged, conf)
	d := Decision{Interval: iv, Target: target, Judged: t.Judged, Good: t.Good,
		Verdict: interval.Decide(iv, func(v float64) bool { return v >= target })}
	if t.Judged > 0 {
		d.Fraction = float64(t.Good) / float64(t.Judged)
	} else {
		d.Verdict = interval.Inconclusive
	}
	return d
}

// String is the decision in words: "pass: 97.0% good [93.1%, 98.8%] of 200, target 90%".
func (d Decision) String() string {
	return fmt.Sprintf("%s: %.1f%% good [%.1f%%, %.1f%%] of %d, target %g%%", d.Verdict,
		100*d.Fraction, 100*d.Interval.Lo, 100*d.Interval.Hi, d.Judged, 100*d.Target)
}
