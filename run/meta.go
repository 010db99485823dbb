package run

import (
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/llmbench-org/llmbench/engine"
	"github.com/llmbench-org/llmbench/internal/version"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/selfmon"
	"github.com/llmbench-org/llmbench/workload"
)

// runMeta guards the run's RunMeta (run.json), which the driver's phase hook
// and the run itself both update.
type runMeta struct {
	mu sync.Mutex
	rundir.RunMeta
	to interface {
		WriteJSON(name string, v any) error
	} // the run directory
}

// newRunMeta is what run.json says of a run before its load: the scenario,
// the engine as the run found it, the prompt calibration, the thresholds and
// baseline it is gated with, where and by what it runs.
func newRunMeta(cfg Config, sc scenarios.Scenario, plan *workload.Plan, ep engine.Endpoint, start time.Time, dir, calibration string, to *recording) *runMeta {
	shard, shards := plan.ShardOf()
	m := &runMeta{to: to, RunMeta: rundir.RunMeta{
		Thresholds: cfg.Thresholds, Baseline: absPath(cfg.Baseline),
		ID: filepath.Base(dir), Scenario: sc.Name, Description: sc.Description, Seed: sc.Seed, StartedAt: start, Version: version.String(), Shard: shard, Shards: shards, Host: hostname(),
		Engine:            rundir.EngineMeta{Kind: sc.Engine.Kind, Dialect: ep.Dialect, BaseURL: ep.BaseURL, MetricsURL: ep.MetricsURL, Model: ep.Model, ContextTokens: ep.ContextTokens, Notes: ep.Notes},
		PromptCalibration: calibration,
	}}
	if sc.Report != nil {
		m.Percentiles = sc.Report.Percentiles
		m.MaxFailureRate = sc.Report.Validity.MaxFailureRate
	}
	m.IgnoreEOS = sc.Workload.IgnoreEOS
	if o := sc.SLO; o != nil {
		m.SLO = &rundir.SLO{TTFT: o.TTFT, TPOT: o.TPOT, E2E: o.E2E, Target: float64(o.Target)}
	}
	m.Search = searchMeta(sc.Workload.Search)
	return m
}

func (m *runMeta) update(fn func(*rundir.RunMeta)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fn(&m.RunMeta)
}

// snapshot is a copy of the RunMeta as it is now (its slices shared).
func (m *runMeta) snapshot() rundir.RunMeta {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.RunMeta
}

// write writes run.json.
// addEngineNote adds what a stage found out about the engine to its notes
// (written with the next write).
func (m *runMeta) addEngineNote(note string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Engine.Notes = append(m.Engine.Notes, note)
}

func (m *runMeta) write() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.to.WriteJSON(rundir.RunFile, m.RunMeta)
}

// settle is the settle stage: once the load is over (each phase's closing
// snapshot settled as it ended: phaseBook.settle), run.json gets what the
// driver did (each phase's load and planned count, dropped and late
// arrivals), how the client fared (clientHealth), when the run ended and why
// it stopped, if it stopped early.
func settle(meta *runMeta, plan *workload.Plan, d driven, interrupted bool) error {
	meta.update(func(m *rundir.RunMeta) {
		completed := d.result.Stop == workload.StopCompleted
		for _, ph := range d.result.Phases {
			m.DroppedArrivals += ph.Dropped
			m.LateArrivals += ph.Late
			// The load each phase offered as the driver ran it (an
			// automatic sweep chooses its rates at run time).
			if i := phaseIndex(m, ph.Name); i >= 0 {
				switch {
				case ph.Rate > 0:
					m.Phases[i].Load, m.Phases[i].LoadUnit = ph.Rate, "requests/s"
				case ph.Concurrency > 0:
					m.Phases[i].Load, m.Phases[i].LoadUnit = float64(ph.Concurrency), "users"
				}
				m.Phases[i].Planned = phasePlanned(plan, ph, completed)
			}
		}
		m.Client = clientHealth(d.self, d.quietGC)
		m.Client.ImagesEncodedAtSend = d.imagesAtSend
		// The run wrote its end: a run directory without it was cut short
		// (llmbench killed), which its report then says.
		m.Ended = time.Now()
		m.Stopped = stopped(d.result, interrupted)
	})
	return meta.write()
}

// clientHealth is how the client fared over the run, as run.json keeps it.
func clientHealth(self selfmon.Report, quietGC bool) rundir.ClientHealth {
	h := rundir.ClientHealth{
		CPUCores: self.Cores, CPUUtilization: self.CPUUtilization,
		SchedLatencyP99_s: self.SchedLatencyP99.Seconds(), Saturated: self.Saturated(), Delay: self.Delay(),
		GCCycles: self.GCCycles, GCPolicy: "GOGC/GOMEMLIMIT from the environment",
	}
	if self.HostMeasured {
		h.HostOtherCPU = &self.HostOtherCPU
	}
	if self.CgroupMeasured {
		if self.CPUQuota > 0 {
			h.CPUQuota = &self.CPUQuota
		}
		h.ThrottledPeriods, h.Throttled_s = self.ThrottledPeriods, self.Throttled.Seconds()
	}
	if quietGC {
		h.GCPolicy = fmt.Sprintf("collect when garbage reaches the live heap or %d MiB, whichever is more (GOGC=off, a memory limit that follows the live heap)", selfmon.GarbageAllowance>>20)
	}
	return h
}

// stopped is why the run stopped early ("" when it ran to its end).
func stopped(res workload.Result, interrupted bool) string {
	switch {
	case interrupted:
		return "interrupted"
	case res.Stop != workload.StopCompleted && res.Stop != "":
		if res.Reason != "" {
			return string(res.Stop) + ": " + res.Reason
		}
		return string(res.Stop)
	}
	return ""
}

// phasePlanned is how many requests a phase offered by its plan: its request
// count, or for an open loop that ran to its end every arrival, sent or
// dropped; 0 where the plan sets no number (closed-loop users for a time,
// or a count and a time, whichever comes first) or the run was cut short.
// A comparison tells by it a run that planned fewer requests from one that
// served fewer.
func phasePlanned(plan *workload.Plan, res workload.PhaseResult, completed bool) int {
	for _, ph := range plan.Phases() {
		if ph.Name != res.Name {
			continue
		}
		switch {
		case ph.Requests > 0 && ph.Duration <= 0:
			return ph.Requests
		case ph.Open() && completed:
			return res.Sent + res.Dropped
		}
	}
	return 0
}
