package run

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
)

// loadScenario is the scenario a run loads: the file at path, or the one
// flags build (the command line's --url; docs/decisions/0048); either way
// decoded and validated by package scenarios. Both, or neither, is the
// user's to fix.
func loadScenario(path string, flags *scenarios.Flags, lookup func(string) (string, bool), overrides []scenarios.Override) (scenarios.Scenario, error) {
	switch {
	case flags != nil && path != "" && len(flags.Given()) == 0: // a flag given its zero value
		return scenarios.Scenario{}, fmt.Errorf("%s and --url's flags both give the scenario: give a file, or --url and its flags", path)
	case flags != nil && path != "":
		return scenarios.Scenario{}, fmt.Errorf("%s and flags that build a scenario (%s) both give it: give a file, or --url and its flags (to point the file at another engine: --set engine.base_url=URL; to change its load: --set workload.concurrency=N, …)", path, strings.Join(flags.Given(), ", "))
	case flags != nil:
		return scenarios.FromFlags(*flags, lookup, overrides...)
	case path == "":
		return scenarios.Scenario{}, errors.New("no scenario: give a SCENARIO.yaml, or --url URL with --concurrency N or --rate R, and --duration D or --requests N")
	}
	return scenarios.LoadEnv(path, lookup, overrides...)
}

// ScenarioFile is the scenario.yaml that reruns the run in dir, or the
// trial set in dir (its first trial's: every trial ran the same one); ""
// when there is none.
func ScenarioFile(dir string) string {
	if dir == "" {
		return ""
	}
	trials, err := rundir.Trials(dir)
	if err != nil {
		return ""
	}
	return filepath.Join(trials[0], rundir.ScenarioFile)
}
