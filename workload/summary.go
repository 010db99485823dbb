package workload

import (
	"fmt"
	"strings"
	"time"
)

// maxCounted bounds how many arrivals Summary counts in one phase.
const maxCounted = 10_000_000

// PlanSummary describes a plan without running it: what `llmbench plan`
// prints. It is a pure function of the scenario, so the same scenario and
// seed give the same summary, byte for byte once encoded.
type PlanSummary struct {
	Scenario string         `json:"scenario"`
	Seed     int64          `json:"seed"`
	Dataset  string         `json:"dataset"`
	Skipped  int            `json:"skipped_records,omitempty"` // data file records that could not be used
	Turns    int            `json:"turns_per_conversation"`
	Phases   []PhaseSummary `json:"phases"`
	// Search describes a capacity search, whose probes are chosen as it
	// runs and so are not among Phases ("" without one).
	Search string `json:"search,omitempty"`
}

// PhaseSummary describes one phase's schedule.
type PhaseSummary struct {
	Name     string        `json:"name"`
	Measured bool          `json:"measured"`
	Drain    bool          `json:"waits_for_previous"`
	Load     string        `json:"load"`
	Duration time.Duration `json:"duration_ns,omitempty"`
	Requests int           `json:"requests,omitempty"`
	// Open loop: the arrivals the schedule holds within the limits (-1: more
	// than 10 million, or chosen at run time), the first and last one's
	// offset from the phase start, and their mean rate.
	Arrivals     int           `json:"arrivals,omitempty"`
	FirstArrival time.Duration `json:"first_arrival_ns,omitempty"`
	LastArrival  time.Duration `json:"last_arrival_ns,omitempty"`
	MeanRate     float64       `json:"mean_rate,omitempty"`
	Cap          string        `json:"cap,omitempty"`
}

// Summary describes the plan's phases and arrival schedules.
func (p *Plan) Summary() PlanSummary {
	s := PlanSummary{Scenario: p.name, Seed: p.seed, Dataset: p.dataDesc, Skipped: p.skipped, Turns: p.turns}
	for _, ph := range p.phases {
		ps := PhaseSummary{Name: ph.Name, Measured: ph.Measured, Drain: ph.Drain, Load: ph.describe(),
			Duration: ph.Duration, Requests: ph.Requests}
		if ph.MaxConcurrency > 0 {
			ps.Cap = fmt.Sprintf("%d in flight, then %s", ph.MaxConcurrency, ph.WhenCapped)
		}
		switch {
		case ph.Sweep == SweepAuto:
			ps.Arrivals = -1
		case ph.Pacer != nil:
			offsets := ph.arrivals(maxCounted + 1)
			ps.Arrivals = len(offsets)
			if len(offsets) > maxCounted {
				ps.Arrivals = -1
			}
			if n := len(offsets); n > 0 {
				ps.FirstArrival, ps.LastArrival = offsets[0], offsets[n-1]
				if span := offsets[n-1] - offsets[0]; n > 1 && span > 0 {
					ps.MeanRate = float64(n-1) / span.Seconds()
				}
			}
		}
		s.Phases = append(s.Phases, ps)
	}
	s.Search = p.search.describe()
	return s
}

// arrivals lists the phase's open-loop offsets within its limits, at most max.
func (ph Phase) arrivals(max int) []time.Duration {
	var out []time.Duration
	for n := 0; n < max; n++ {
		off, ok := ph.Pacer.Offset(n)
		if !ok || (ph.Duration > 0 && off >= ph.Duration) || (ph.Requests > 0 && n >= ph.Requests) {
			break
		}
		out = append(out, off)
	}
	return out
}

// describe says in words what load the phase puts on the engine.
func (ph Phase) describe() string {
	switch {
	case ph.Sweep == SweepAuto:
		return fmt.Sprintf("open loop, %s, rate %d of %d between the baseline's and the probe's throughput (chosen at run time)",
			ph.arrivalName(), ph.AutoStep, ph.AutoMax)
	case ph.Arrival == "trace":
		return "open loop, trace replay"
	case len(ph.RateStages) > 0:
		var legs []string
		for _, st := range ph.RateStages {
			legs = append(legs, fmt.Sprintf("%g/s over %s", st.Rate, st.Duration))
		}
		return fmt.Sprintf("open loop, %s, rate ramp from 0: %s", ph.arrivalName(), strings.Join(legs, ", "))
	case ph.Pacer != nil:
		return fmt.Sprintf("open loop, %s, %g requests/s", ph.arrivalName(), ph.Rate)
	case len(ph.Levels) > 0:
		peak := 0
		for _, l := range ph.Levels {
			peak = max(peak, l.Users)
		}
		return fmt.Sprintf("closed loop, user ramp (%d changes, peak %d users)%s", len(ph.Levels), peak, ph.describeThink())
	}
	users := "users"
	if ph.Concurrency == 1 {
		users = "user"
	}
	return fmt.Sprintf("closed loop, %d %s%s", ph.Concurrency, users, ph.describeThink())
}

func (ph Phase) arrivalName() string {
	if ph.Arrival == "gamma" {
		return fmt.Sprintf("gamma (cv %g)", ph.CV)
	}
	return ph.Arrival
}

func (ph Phase) describeThink() string {
	switch t := ph.think.(type) {
	case nil:
		return ""
	case fixedThink:
		return fmt.Sprintf(", think %s", time.Duration(t))
	case uniformThink:
		return fmt.Sprintf(", think uniform[%s, %s]", t.min, t.max)
	case exponentialThink:
		return fmt.Sprintf(", think exponential(mean %s)", time.Duration(t))
	}
	return ", think time"
}

// Preview returns the first n requests of the plan in index order, as the
// first phase would send them: Phase set, and for an open loop Intended set
// to the arrival's offset from the phase start (a run adds the phase's start).
// It stops where the phase does: at its request limit, or its last arrival.
func (p *Plan) Preview(n int) []Request {
	first := p.First()
	if first.Requests > 0 {
		n = min(n, first.Requests)
	}
	out := make([]Request, 0, n)
	for i := range n {
		r := p.Request(i)
		r.Messages = hashImages(r.Messages)
		r.Phase = first.Name
		if p.agentic != nil {
			r.Intended = p.agentic.intended(i)
		} else if first.Pacer != nil && i%p.turns == 0 {
			off, ok := first.Pacer.Offset(i / p.turns)
			if !ok {
				break
			}
			r.Intended = off
		}
		out = append(out, r)
	}
	return out
}
