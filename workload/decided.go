package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/scenarios"
)

// searchPlan is what a capacity search's probes are made of: the search,
// the workload's load (its arrival process and cap) and its limits.
type searchPlan struct {
	spec   scenarios.Search
	load   scenarios.LoadSpec
	limits scenarios.Limits
}

// Search is the plan's capacity search (nil: none). Its probes are not
// among Phases: the run asks Probe for each as the search chooses it.
func (p *Plan) Search() *scenarios.Search {
	if p.search == nil {
		return nil
	}
	s := p.search.spec
	return &s
}

// ReprobeFactor is how much longer a re-probe runs than a first attempt
// (its duration and its requests).
const ReprobeFactor = 2

// Probe is the measured phase that probes load (requests/s, or users) for a
// capacity search: the workload's load at that level, with its limits (×
// ReprobeFactor for attempt 2), named search-rate-12.5 or
// search-concurrency-8 (-r2 for a re-probe), so per-phase reports and
// phase[NAME] gates address it.
func (p *Plan) Probe(load float64, attempt int) (Phase, error) {
	if p.search == nil {
		return Phase{}, fmt.Errorf("plan %s has no search", p.name)
	}
	sp := p.search
	spec := sp.load
	lim := sp.limits
	if attempt > 1 {
		lim.Duration *= ReprobeFactor
		lim.Requests *= ReprobeFactor
	}
	switch sp.spec.Over {
	case scenarios.SearchConcurrency:
		spec.Concurrency, spec.Rate = int(math.Round(load)), 0
	default:
		spec.Rate, spec.Concurrency = load, 0
	}
	ph, err := p.phase(ProbeName(sp.spec.Over, load, attempt), true, true, spec, lim)
	ph.Sweep = SweepSearch
	return ph, err
}

// SweepSearch is the role of a capacity search's probe.
const SweepSearch = "search"

// ProbeName names a probe phase.
func ProbeName(over string, load float64, attempt int) string {
	name := "search-" + over + "-" + strconv.FormatFloat(load, 'f', -1, 64)
	if over == scenarios.SearchRate {
		name = "search-" + over + "-" + strconv.FormatFloat(math.Round(load*1000)/1000, 'f', -1, 64)
	}
	if attempt > 1 {
		name += "-r" + strconv.Itoa(attempt)
	}
	return name
}

// phase is plan phase i, or, past the plan's phases, the one Driver.Next
// gives once prev has drained (false: the run is over).
func (r *run) phase(i int, prev *phaseRun) (Phase, bool) {
	if i < len(r.d.Plan.phases) {
		return r.d.Plan.phases[i], true
	}
	if r.d.Next == nil {
		return Phase{}, false
	}
	if prev != nil {
		select {
		case <-prev.drained:
		case <-r.ctx.Done():
			return Phase{}, false
		}
	}
	if r.halted() {
		return Phase{}, false
	}
	r.mu.Lock()
	done := make([]PhaseResult, len(r.phases))
	for k, pr := range r.phases {
		pr.mu.Lock()
		done[k] = pr.res
		pr.mu.Unlock()
	}
	r.mu.Unlock()
	return r.d.Next(done)
}

// decideUntil, for a phase that runs until decided, asks Driver.Decided
// every DecideEvery once a quarter of the phase's duration has passed and a
// quarter of its requests were sent (so a probe's opening, before queues
// reach their steady state, cannot decide it alone), and ends the phase's
// arrivals when it says so. The returned function stops asking.
func (pr *phaseRun) decideUntil() (stop func()) {
	if !pr.phase.UntilDecided || pr.r.d.Decided == nil {
		return func() {}
	}
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(DecideEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-pr.closed:
				return
			case <-tick.C:
			}
			if !pr.pastFirstQuarter() || !pr.r.d.Decided(pr.phase.Name) {
				continue
			}
			pr.fill()
			return
		}
	}()
	return func() { close(done); <-ended }
}

// pastFirstQuarter reports whether a quarter of the phase's duration and of
// its requests are behind it (of those it has).
func (pr *phaseRun) pastFirstQuarter() bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	ph := pr.phase
	if ph.Duration > 0 && pr.r.now()-pr.res.Start < ph.Duration/4 {
		return false
	}
	return ph.Requests <= 0 || pr.res.Sent >= (ph.Requests+3)/4
}

// fill ends the phase's arrivals as its request limit would.
func (pr *phaseRun) fill() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.isFull {
		pr.isFull = true
		close(pr.full)
	}
}

// describe is the search in words, for the plan: "capacity search over
// rate in [2, 40] to 10%, at most 8 probes, each a measured phase of 8s,
// until decided" ("" for none).
func (sp *searchPlan) describe() string {
	if sp == nil {
		return ""
	}
	s := sp.spec
	var limits []string
	if sp.limits.Duration > 0 {
		limits = append(limits, sp.limits.Duration.String())
	}
	if sp.limits.Requests > 0 {
		limits = append(limits, strconv.Itoa(sp.limits.Requests)+" requests")
	}
	out := fmt.Sprintf("capacity search over %s in [%g, %g] to %g%%, at most %d probes, each a measured phase of %s",
		s.Over, s.Min, s.Max, 100*float64(s.Tolerance), s.MaxProbes, strings.Join(limits, " or "))
	if sp.limits.Until == scenarios.UntilDecided {
		out += " ending once decided"
	}
	return out + " (an inconclusive one again, twice as long)"
}

// First is the phase the run starts with: the plan's first, or for a
// search with no warmup a probe at its smallest load (the phase its requests
// would first go out in, at the gentlest pace).
func (p *Plan) First() Phase {
	if len(p.phases) > 0 || p.search == nil {
		return p.phases[0]
	}
	ph, _ := p.Probe(p.search.spec.Min, 1)
	return ph
}
