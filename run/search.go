package run

import (
	"sync"

	"github.com/llmbench-org/llmbench/capacity"
	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/interval"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/workload"
)

// decisions is the search stage: the run's SLO verdicts as the load goes,
// for the phases that run until decided and a capacity search's probes
// (docs/decisions/0040). Each finished request is judged in the sender's
// path, before the driver counts it done, so the tally of a drained phase
// holds every one of its requests; the search chooses each next probe from
// the verdict of the last, and run.json keeps the probes as decided.
type decisions struct {
	slo  rundir.SLO
	obj  capacity.Objective
	plan *workload.Plan
	meta *runMeta

	mu      sync.Mutex
	tallies map[string]*capacity.Tally

	search *capacity.Search // nil: the scenario has none
	probe  *rundir.SearchProbe
}

// newDecisions is the stage for sc (nil when it decides nothing: no SLO).
func newDecisions(sc scenarios.Scenario, plan *workload.Plan, meta *runMeta) *decisions {
	if sc.SLO == nil {
		return nil
	}
	slo := rundir.SLO{TTFT: sc.SLO.TTFT, TPOT: sc.SLO.TPOT, E2E: sc.SLO.E2E}
	d := &decisions{slo: slo, obj: capacity.Objective{SLO: slo, Target: float64(sc.SLO.Target)},
		plan: plan, meta: meta, tallies: map[string]*capacity.Tally{}}
	if s := plan.Search(); s != nil {
		d.search = capacity.NewSearch(capacity.Spec{Min: s.Min, Max: s.Max, Tolerance: float64(s.Tolerance),
			MaxProbes: s.MaxProbes, Integer: s.Over == scenarios.SearchConcurrency})
	}
	return d
}

// searchMeta is run.json's record of a scenario's search before any probe.
func searchMeta(s *scenarios.Search) *rundir.Search {
	if s == nil {
		return nil
	}
	return &rundir.Search{Over: s.Over, Min: s.Min, Max: s.Max, Tolerance: float64(s.Tolerance), MaxProbes: s.MaxProbes}
}

// attach gives the driver the verdicts it asks for (nil d: none).
func (d *decisions) attach(drv *workload.Driver) {
	if d == nil {
		return
	}
	drv.Decided = d.decided
	if d.search != nil {
		drv.Next = d.next
	}
}

// add judges a finished request for its phase; once per request, never per
// chunk.
func (d *decisions) add(r *client.Record) {
	if d == nil {
		return
	}
	d.mu.Lock()
	t := d.tallies[r.Phase]
	if t == nil {
		t = &capacity.Tally{}
		d.tallies[r.Phase] = t
	}
	t.Add(d.slo, r)
	d.mu.Unlock()
}

// verdict is phase's verdict so far at confidence conf.
func (d *decisions) verdict(phase string, conf float64) capacity.Decision {
	d.mu.Lock()
	var t capacity.Tally
	if p := d.tallies[phase]; p != nil {
		t = *p
	}
	d.mu.Unlock()
	return d.obj.Decide(t, conf)
}

// decided is the driver's question for a phase that runs until decided:
// has its interim verdict (at capacity.InterimConfidence) left inconclusive?
func (d *decisions) decided(phase string) bool {
	return d.verdict(phase, capacity.InterimConfidence).Verdict != interval.Inconclusive
}

// next is the driver's Next: it records the verdict of the probe that has
// just drained, asks the search for the next load, and returns its probe
// phase; false once the search is over.
func (d *decisions) next([]workload.PhaseResult) (workload.Phase, bool) {
	d.finish()
	load, attempt, ok := d.search.Next()
	if !ok {
		return workload.Phase{}, false
	}
	ph, err := d.plan.Probe(load, attempt)
	if err != nil { // a load the plan cannot build (validated away): end the search
		return workload.Phase{}, false
	}
	d.probe = &rundir.SearchProbe{Phase: ph.Name, Load: load, Attempt: attempt}
	return ph, true
}

// eventLoad is the load of a phase chosen at run time, from its start event.
func eventLoad(ev workload.PhaseEvent) (float64, string) {
	switch {
	case ev.Rate > 0:
		return ev.Rate, "requests/s"
	case ev.Concurrency > 0:
		return float64(ev.Concurrency), "users"
	}
	return 0, ""
}

// searchConcurrency is the most connections a search's probes keep busy
// (the smallest, 1, without a search), like expectedConcurrency's phases.
func searchConcurrency(plan *workload.Plan) int {
	s := plan.Search()
	if s == nil {
		return 1
	}
	return max(1, min(int(s.Max+0.5), 1024))
}

// finish records the verdict of the probe that ran last, if it is not yet
// recorded: when it has drained (next), or when the run ended with it (nil
// d, or no search: nothing).
func (d *decisions) finish() {
	if d == nil || d.probe == nil {
		return
	}
	v := d.verdict(d.probe.Phase, interval.Confidence).Verdict
	d.search.Observe(capacity.Probe{Load: d.probe.Load, Attempt: d.probe.Attempt, Verdict: v})
	p := *d.probe
	p.Verdict = string(v)
	d.meta.update(func(m *rundir.RunMeta) {
		if m.Search != nil {
			m.Search.Probes = append(m.Search.Probes, p)
		}
	})
	d.meta.write()
	d.probe = nil
}
