package run

import (
	"os"

	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/workload"
)

// Load loads a scenario, with the FIELD=VALUE overrides applied, and builds
// its plan, which reads and checks the data files it names, and checks the
// scenario's gates against the plan's phases. Every error is a *ConfigError:
// the user's to fix. validate, plan and run all load a scenario this way.
func Load(path string, sets []string) (scenarios.Scenario, *workload.Plan, error) {
	return load(path, sets, os.LookupEnv)
}

// load is Load with ${VAR} expanded from lookup.
func load(path string, sets []string, lookup func(string) (string, bool)) (scenarios.Scenario, *workload.Plan, error) {
	var overrides []scenarios.Override
	for _, s := range sets {
		o, err := scenarios.ParseOverride(s)
		if err != nil {
			return scenarios.Scenario{}, nil, configError(err)
		}
		overrides = append(overrides, o)
	}
	sc, err := scenarios.LoadEnv(path, lookup, overrides...)
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

// PhaseNames lists the plan's phases in order.
func PhaseNames(plan *workload.Plan) []string {
	var names []string
	for _, ph := range plan.Phases() {
		names = append(names, ph.Name)
	}
	return names
}
