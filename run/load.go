package run

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/workload"
)

// Load loads a scenario, with the FIELD=VALUE overrides applied, and builds
// its plan, which reads and checks the data files it names, and checks the
// scenario's gates against the plan's phases. Every error is a *ConfigError:
// the user's to fix. validate, plan and run all load a scenario this way.
func Load(path string, sets []string) (scenarios.Scenario, *workload.Plan, error) {
	return load(path, nil, sets, os.LookupEnv)
}

// load is Load with ${VAR} expanded from lookup, of the scenario that flags
// build when they are given (the command line's --url), else of the file.
func load(path string, flags *scenarios.Flags, sets []string, lookup func(string) (string, bool)) (scenarios.Scenario, *workload.Plan, error) {
	var overrides []scenarios.Override
	for _, s := range sets {
		o, err := scenarios.ParseOverride(s)
		if err != nil {
			return scenarios.Scenario{}, nil, configError(err)
		}
		overrides = append(overrides, o)
	}
	sc, err := loadScenario(path, flags, lookup, overrides)
	if err != nil {
		return sc, nil, configError(err)
	}
	// The built-in engine's settings are its model's to read.
	if err := sc.ResolveEngine(sim.Model{}); err != nil {
		return sc, nil, configError(err)
	}
	plan, err := workload.NewPlan(sc)
	if err != nil {
		return sc, nil, configError(err)
	}
	// The gates' expressions belong to the gates package, not to the
	// scenario's schema: they are checked here, against the plan's phases.
	if sc.Gates != nil {
		if _, err := parseGates(path, sc.Gates, nil, PhaseNames(plan)); err != nil {
			return sc, nil, err
		}
	}
	return sc, plan, nil
}

// PhaseNames lists the plan's phases in order; nil for a plan with a
// capacity search, whose probes are named only as the search chooses them
// (so a phase[search-rate-13] gate is not refused before the run).
func PhaseNames(plan *workload.Plan) []string {
	if plan.Search() != nil {
		return nil
	}
	var names []string
	for _, ph := range plan.Phases() {
		names = append(names, ph.Name)
	}
	return names
}

// loaded is a run's scenario and plan, checked before anything starts.
type loaded struct {
	sc          scenarios.Scenario
	plan        *workload.Plan // this shard's share of it, with --shard
	resolved    []byte         // the scenario as the run runs it (scenario.yaml)
	shardSuffix string         // "-shard1of4" in the run directory's name
	runsDir     string
}

// loadRun is the load stage: the scenario with its overrides and plan
// (load), the gates and baseline, the shard of the plan, the start time;
// every problem is found before an engine starts or a file is written.
func loadRun(cfg Config, sys IO) (loaded, error) {
	sc, plan, err := load(cfg.Scenario, cfg.Flags, cfg.Sets, sys.lookupEnv)
	if err != nil {
		return loaded{}, err
	}
	if err := gatesForRun(cfg, sc.Gates, plan); err != nil {
		return loaded{}, err
	}
	ld := loaded{sc: sc, plan: plan, runsDir: cfg.RunsDir}
	if ld.resolved, err = sc.Resolved(); err != nil {
		return loaded{}, configError(err)
	}
	if cfg.Shard != "" {
		var i, n int
		if _, err := fmt.Sscanf(cfg.Shard, "%d/%d", &i, &n); err != nil || fmt.Sprintf("%d/%d", i, n) != cfg.Shard {
			return loaded{}, configError(fmt.Errorf("--shard %q: want i/n, e.g. 0/4", cfg.Shard))
		}
		if ld.plan, err = plan.Shard(i, n); err != nil {
			return loaded{}, configError(err)
		}
		ld.shardSuffix = fmt.Sprintf("-shard%dof%d", i, n)
	}
	if err := checkStartAt(cfg.StartAt); err != nil {
		return loaded{}, err
	}
	if ld.runsDir == "" {
		ld.runsDir = "runs"
	}
	return ld, nil
}

// runDir is where the run directory of a run started at start goes: its
// time, the scenario's name and the shard (createRecording adds -2, ... if
// that exists).
func (l loaded) runDir(start time.Time) string {
	return filepath.Join(l.runsDir, start.UTC().Format("20060102T150405Z")+"-"+l.sc.Name+l.shardSuffix)
}
