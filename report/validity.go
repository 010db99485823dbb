package report

import (
	"math"
	"time"

	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/report/validity"
	"github.com/llmbench-org/llmbench/rundir"
)

// judged keeps states as the run's validity: the named states, and beside
// them for compatibility valid (no invalid state) and problems (the invalid
// states' words, in order).
func (h *Health) judged(states []validity.State) {
	if states == nil {
		states = []validity.State{}
	}
	h.States = states
	h.Problems = validity.Problems(states)
	h.Valid = validity.Valid(states)
}

// validityInput gathers what package validity decides from: the measured
// phases' requests and figures already in s (client, findings), the run's
// own bookkeeping in meta.
func validityInput(meta rundir.RunMeta, s *Summary, records []request, partialLines, duplicates int) validity.Input {
	c := s.Client
	in := validity.Input{
		Sent: c.Requests.Sent, Failed: c.Requests.Failed, Canceled: c.Requests.Canceled,
		MaxFailureRate:  meta.MaxFailureRate,
		Client:          meta.Client,
		DroppedArrivals: meta.DroppedArrivals, LateArrivals: meta.LateArrivals,
		LateP99:      time.Duration(s.Health.ScheduleLag.P99 * float64(time.Second)),
		Rates:        phaseRates(meta.Phases, records),
		LengthsAsked: meta.IgnoreEOS == nil || *meta.IgnoreEOS,
		Stopped:      meta.Stopped,
		Records:      s.Health.Records,
		PartialLines: partialLines, Duplicates: duplicates,
	}
	if o := c.Tokens.OutputShort; o != nil {
		in.ShortRequests, in.LengthsOf, in.MissingFraction = o.Requests, o.Of, o.MissingFraction
	}
	for _, f := range s.Findings {
		if f.ID == reconcile.IDCounterReset {
			in.Restarts = int(f.Evidence["resets"])
			in.FirstRestart = time.Duration(f.Evidence["first_reset_at_s"] * float64(time.Second))
		}
	}
	return in
}

// phaseRates is each measured open-loop phase's arrival rate: planned, over
// the span of its requests' intended send times, and achieved, over the
// span of their actual sends (the same requests, so a Poisson schedule's
// own spread cancels). A phase needs three requests for a rate.
func phaseRates(phases []rundir.PhaseMeta, records []request) []validity.PhaseRate {
	type span struct {
		n                   int
		firstDue, lastDue   time.Duration
		firstSent, lastSent time.Duration
	}
	spans := map[string]*span{}
	for _, r := range records {
		if r.Intended <= 0 { // closed loop: no schedule
			continue
		}
		sp := spans[r.Phase]
		if sp == nil {
			sp = &span{firstDue: math.MaxInt64, firstSent: math.MaxInt64}
			spans[r.Phase] = sp
		}
		sp.n++
		sp.firstDue, sp.lastDue = min(sp.firstDue, r.Intended), max(sp.lastDue, r.Intended)
		sp.firstSent, sp.lastSent = min(sp.firstSent, r.Sent), max(sp.lastSent, r.Sent)
	}
	var out []validity.PhaseRate
	for _, ph := range phases {
		sp := spans[ph.Name]
		if !ph.Measured || sp == nil || sp.n < 3 || sp.lastDue <= sp.firstDue || sp.lastSent <= sp.firstSent {
			continue
		}
		gaps := float64(sp.n - 1)
		out = append(out, validity.PhaseRate{Phase: ph.Name, Requests: sp.n,
			Planned:  gaps / (sp.lastDue - sp.firstDue).Seconds(),
			Achieved: gaps / (sp.lastSent - sp.firstSent).Seconds()})
	}
	return out
}

// stateText is a state for a reader who already saw the problems: a
// warning's words and what the latencies cover, or for an invalid state
// (its words are the problems above) what the latencies cover.
func stateText(st validity.State) string {
	if st.Severity == validity.Invalid {
		return upperFirst(st.Covers)
	}
	return upperFirst(st.Says) + "; " + st.Covers
}
