package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/llmbench-org/llmbench/engine"
	"github.com/llmbench-org/llmbench/engine/launch"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/selfmon"
)

// selfEnv is added to the environment of llmbench's own child processes;
// tests set it so that the test binary acts as the llmbench command.
var selfEnv []string

// simProcess runs the built-in engine as `llmbench serve` in a child process
// (docs/decisions/0005): the engine's CPU, goroutines and garbage collector
// then stay out of the client's process, whose timestamps and self-measured
// CPU are what a run reports. Its output goes to engine.log.
func simProcess(sc scenarios.Scenario, runDir string) (engine.Engine, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find llmbench's own executable to run the built-in engine: %w", err)
	}
	args := []string{self, "serve", "--addr", "{host}:{port}", "--dialect", sc.Engine.Dialect,
		"--truth", filepath.Join(runDir, report.TruthFile)}
	if sc.Model != "" {
		args = append(args, "--model", sc.Model)
	}
	if sc.Engine.Dialect == sim.DialectFastDeploy {
		args = append(args, "--trace-log", filepath.Join(runDir, report.TraceLogFile))
	}
	preset, err := sim.Preset(sc.Engine.Preset)
	if err != nil {
		return nil, err
	}
	args = append(args, "--preset", sc.Engine.Preset)
	params, err := overrideFlags("--param", sc.Engine.Sim, preset)
	if err != nil {
		return nil, err
	}
	faults, err := overrideFlags("--fault", sc.Engine.Faults, sim.Faults{})
	if err != nil {
		return nil, err
	}
	args = append(append(args, params...), faults...)
	// The engine's truth stamps are taken right after each flush: its
	// collector, like the client's, is kept out of the measurement (0004).
	env := append([]string(nil), selfEnv...)
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		env = append(env, "GOGC=off", fmt.Sprintf("GOMEMLIMIT=%d", selfmon.DefaultMemoryLimit))
	}
	return launch.New(launch.Config{
		Kind: launch.KindCommand, Command: args, Dialect: sc.Engine.Dialect, Env: env,
		LogPath: filepath.Join(runDir, report.EngineLogFile),
	})
}

// overrideFlags spells every field of v (yaml-tagged) that differs from base
// as `flag key=value`, so the child engine gets exactly the scenario's
// resolved values; values are JSON, which YAML reads back as they were
// (durations as "2ms", lists).
func overrideFlags(flag string, v, base any) ([]string, error) {
	fields, err := yamlFields(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s values: %w", flag, err)
	}
	baseFields, err := yamlFields(base)
	if err != nil {
		return nil, fmt.Errorf("encode %s values: %w", flag, err)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		j, err := json.Marshal(fields[k])
		if err != nil {
			return nil, fmt.Errorf("encode %s %s: %w", flag, k, err)
		}
		if b, _ := json.Marshal(baseFields[k]); string(b) == string(j) {
			continue
		}
		out = append(out, flag, k+"="+string(j))
	}
	return out, nil
}

// yamlFields is v's fields by their YAML names.
func yamlFields(v any) (map[string]any, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	fields := map[string]any{}
	err = yaml.Unmarshal(b, &fields)
	return fields, err
}
