package scenarios

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/llmbench-org/llmbench/engine/sim"
)

const head = "name: x\nengine: {kind: sim}\n"

// TestSchemaErrors checks the issue-4 parts of the schema: each mistake is
// reported at its place with its field.
func TestSchemaErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"two load kinds", head + "workload: {rate: 2, stages: [{duration: 1s, rate: 3}]}\n",
			[]string{`f.yaml:3:29: workload.stages: set one of concurrency (closed loop), rate (open loop) or stages, not rate and stages`}},
		{"think time in an open loop", head + "workload: {rate: 2, duration: 1s, think_time: 1s}\n",
			[]string{`f.yaml:3:47: workload.think_time: only for a closed loop (concurrency): an open loop sends on its schedule`}},
		{"arrival in a closed loop", head + "workload: {concurrency: 2, duration: 1s, arrival: poisson}\n",
			[]string{`f.yaml:3:51: workload.arrival: only for an open loop (rate, rate stages, sweep rates, trace)`}},
		{"cv without gamma", head + "workload: {rate: 2, duration: 1s, cv: 2}\n",
			[]string{`f.yaml:3:39: workload.cv: only with arrival: gamma`}},
		{"when_capped without a cap", head + "workload: {rate: 2, duration: 1s, when_capped: wait}\n",
			[]string{`f.yaml:3:48: workload.when_capped: only with max_concurrency`}},
		{"unknown cap policy", head + "workload: {rate: 2, duration: 1s, max_concurrency: 4, when_capped: queue}\n",
			[]string{`f.yaml:3:68: workload.when_capped: unknown policy "queue": drop or wait`}},
		{"stages mixing kinds", head + "workload:\n  stages:\n    - {duration: 1s, rate: 3}\n    - {duration: 1s, concurrency: 3}\n",
			[]string{`f.yaml:6:35: workload.stages[1].concurrency: stages ramp either rates or concurrencies, not both`}},
		{"stage without target", head + "workload:\n  stages: [{duration: 1s}]\n",
			[]string{`f.yaml:4:12: workload.stages[0]: set rate or concurrency (the target this stage ramps to)`}},
		{"stages of no time", head + "workload:\n  stages: [{duration: 0s, rate: 3}]\n",
			[]string{`f.yaml:4:11: workload.stages: the stages last no time: give at least one a positive duration`}},
		{"sweep with a load", head + "workload: {concurrency: 2, duration: 1s, sweep: {rates: [1, 2]}}\n",
			[]string{`f.yaml:3:25: workload.concurrency: not with sweep: the sweep points are the load`}},
		{"sweep duplicate and two kinds", head + "workload:\n  duration: 1s\n  sweep: {rates: [1, 2, 1]}\n",
			[]string{`f.yaml:5:25: workload.sweep.rates[2]: duplicate rate 1`}},
		{"sweep of two kinds", head + "workload:\n  duration: 1s\n  sweep: {rates: [1], concurrencies: [2]}\n",
			[]string{`f.yaml:5:38: workload.sweep.concurrencies: set one of rates, concurrencies or auto, not rates and concurrencies`}},
		{"sweep without limits", head + "workload:\n  sweep: {auto: {points: 0}}\n",
			[]string{`f.yaml:4:3: workload: missing required field: duration, requests, or both`,
				`f.yaml:4:26: workload.sweep.auto.points: want at least 1, got 0`}},
		{"cooldown with sweep", head + "workload:\n  duration: 1s\n  sweep: {concurrencies: [1, 2]}\n  cooldown: {duration: 1s}\n",
			[]string{`f.yaml:6:13: workload.cooldown: not with sweep: each point drains before the next, so a cooldown would only cover the last`}},
		{"trace with a dataset", head + "workload:\n  trace: {format: mooncake, path: nowhere.jsonl}\n  prompt_tokens: 5\n",
			[]string{`f.yaml:4:35: workload.trace.path: cannot read nowhere.jsonl: stat testdata/nowhere.jsonl: no such file or directory`,
				`f.yaml:5:18: workload.prompt_tokens: not with trace: the trace gives each request's lengths`}},
		{"trace format", head + "workload:\n  trace: {format: sharegpt, path: lengths.csv, time_scale: 0}\n",
			[]string{`f.yaml:4:19: workload.trace.format: unknown trace format "sharegpt": mooncake, azure, burstgpt, azure_multimodal, weka or copilot`,
				`f.yaml:4:60: workload.trace.time_scale: want a factor > 0, got 0`}},
		{"phases need names, limits and a measured one", head + "workload:\n  phases:\n    - {concurrency: 1, measured: false}\n",
			[]string{`f.yaml:5:5: workload.phases: no measured phase: set measured: true on at least one`,
				`f.yaml:5:7: workload.phases[0].name: missing required field`,
				`f.yaml:5:7: workload.phases[0]: missing required field: duration, requests, or both`}},
		{"phase without load", head + "workload:\n  phases:\n    - {name: a, duration: 1s}\n",
			[]string{`f.yaml:5:7: workload.phases[0]: no load: set concurrency, rate or stages here or on the workload`}},
		{"phases with top-level limits", head + "workload:\n  concurrency: 1\n  duration: 1s\n  phases:\n    - {name: a, requests: 3}\n",
			[]string{`f.yaml:5:13: workload.duration: not with phases: give each phase its own duration or requests`}},
		{"warmup modifiers without a load", head + "workload:\n  rate: 3\n  duration: 1s\n  warmup: {duration: 1s, arrival: constant}\n",
			[]string{`f.yaml:6:35: workload.warmup.arrival: set concurrency, rate or stages to give warmup its own load; without them it inherits the workload's whole load`}},
		{"dataset parameters", head + "workload:\n  concurrency: 1\n  duration: 1s\n  dataset: {type: shared_prefix, groups: 2, turns: 3}\n",
			[]string{`f.yaml:6:12: workload.dataset.prompts_per_group: missing required field for dataset shared_prefix`,
				`f.yaml:6:12: workload.dataset.prefix_tokens: missing required field for dataset shared_prefix`,
				`f.yaml:6:52: workload.dataset.turns: not a parameter of dataset shared_prefix (it takes [groups prompts_per_group prefix_tokens])`}},
		{"sharegpt with prompt_tokens", head + "workload:\n  concurrency: 1\n  duration: 1s\n  dataset: {type: sharegpt, path: lengths.csv}\n  prompt_tokens: 5\n",
			[]string{`f.yaml:7:18: workload.prompt_tokens: not with dataset sharegpt: the file gives the prompts`}},
		{"length distributions", head + "workload:\n  concurrency: 1\n  duration: 1s\n  prompt_tokens: {dist: normal, mean: 10}\n  output_tokens: {dist: empirical, file: missing.csv}\n",
			[]string{`f.yaml:6:18: workload.prompt_tokens: normal needs mean and stddev (of the token length)`,
				`f.yaml:7:42: workload.output_tokens.file: cannot read missing.csv: stat testdata/missing.csv: no such file or directory`}},
		{"think time distribution", head + "workload:\n  concurrency: 1\n  duration: 1s\n  think_time: {dist: exponential, min: 1s}\n",
			[]string{`f.yaml:6:15: workload.think_time: exponential needs mean`,
				`f.yaml:6:40: workload.think_time.min: not a parameter of dist exponential (it takes [mean])`}},
		{"abort", head + "workload: {concurrency: 1, duration: 1s, abort: {error_rate: 2, min_requests: -1}}\n",
			[]string{`f.yaml:3:62: workload.abort.error_rate: want a fraction in (0, 1], got 2`,
				`f.yaml:3:79: workload.abort.min_requests: only with error_rate, and at least 0`}},
		{"sim overrides", "name: x\nengine:\n  kind: sim\n  preset: tiny\n  sim: {max_running_request: 4, kv_blocks: -1}\n" + "workload: {concurrency: 1, duration: 1s}\n",
			[]string{`f.yaml:5:9: engine.sim.max_running_request: unknown field (did you mean "max_running_requests"?)`,
				`f.yaml:5:44: engine.sim.kv_blocks: kv_blocks must be > 0, got -1`}},
		{"unknown preset", "name: x\nengine: {kind: sim, preset: h100}\nworkload: {concurrency: 1, duration: 1s}\n",
			[]string{fmt.Sprintf(`f.yaml:2:29: engine.preset: unknown sim preset "h100" (known: %v)`, sim.PresetNames())}},
		{"sim options on an external engine", "name: x\nmodel: m\nengine: {kind: external, base_url: \"http://h/v1\", preset: tiny, sim: {}}\nworkload: {concurrency: 1, duration: 1s}\n",
			[]string{`f.yaml:3:59: engine.preset: only for kind sim: llmbench does not model an external engine`,
				`f.yaml:3:70: engine.sim: only for kind sim: llmbench does not model an external engine`}},
		{"faults", "name: x\nengine: {kind: sim, faults: {error_rate: 2, stall_fo: 1s}}\nworkload: {concurrency: 1, duration: 1s}\n",
			[]string{`f.yaml:2:42: engine.faults.error_rate: faults.error_rate must be in [0, 1], got 2`,
				`f.yaml:2:45: engine.faults.stall_fo: unknown field (did you mean "stall_for"?)`}},
		{"empty gates", head + "workload: {concurrency: 1, duration: 1s}\ngates: {thresholds: []}\n",
			[]string{`f.yaml:4:21: gates.thresholds: missing: list at least one threshold, or remove gates`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseIn("f.yaml", []byte(tt.yaml), noEnv)
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error = %v, want an ErrorList", err)
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSimOverridesApplyOntoThePreset(t *testing.T) {
	t.Parallel()
	s, err := parseIn("f.yaml", []byte("name: x\nengine:\n  sim: {max_running_requests: 8, decode_base: 3ms}\n  preset: tiny\n  kind: sim\nworkload: {concurrency: 1, duration: 1s}\n"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := sim.Preset("tiny")
	want.MaxRunningRequests, want.DecodeBase = 8, 3*time.Millisecond
	if diff := cmp.Diff(&want, s.Engine.Sim); diff != "" {
		t.Errorf("sim params (-want +got):\n%s", diff)
	}
}

func TestDataFilesResolveAgainstTheScenario(t *testing.T) {
	t.Parallel()
	src := head + "workload:\n  concurrency: 1\n  duration: 1s\n  prompt_tokens: {dist: empirical, file: lengths.csv}\n"
	s, err := Parse("testdata/x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("testdata/lengths.csv")
	if s.Workload.Prompt.File != abs {
		t.Errorf("file %q, want the absolute %q", s.Workload.Prompt.File, abs)
	}
	if data, err := readOpened(s, s.Workload.Prompt.File); err != nil || !strings.HasPrefix(string(data), "tokens,weight") {
		t.Errorf("Open: %q, %v", data, err)
	}
	// The embedded trace example reads its trace from the embedded files.
	ex, err := LoadFS(Examples(), "trace-replay.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := readOpened(ex, ex.Workload.Trace.Path); err != nil || !strings.Contains(string(data), "hash_ids") {
		t.Errorf("trace example: Open(%q): %v", ex.Workload.Trace.Path, err)
	}
}

// readOpened reads the whole of a data file s.Open opens.
func readOpened(s Scenario, name string) ([]byte, error) {
	f, err := s.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func TestValidWorkloadShapes(t *testing.T) {
	t.Parallel()
	for name, yaml := range map[string]string{
		"gamma ramp":        "workload:\n  arrival: gamma\n  cv: 3\n  stages: [{duration: 5s, rate: 10}, {duration: 0s, rate: 2}, {duration: 5s, rate: 2}]\n",
		"user ramp":         "workload:\n  stages: [{duration: 5s, concurrency: 10}]\n  think_time: {dist: uniform, min: 0s, max: 2s}\n",
		"phases":            "workload:\n  rate: 5\n  phases:\n    - {name: warm, duration: 2s, measured: false}\n    - {name: steady, duration: 10s}\n    - {name: burst, rate: 50, arrival: constant, requests: 100, drain: false}\n",
		"concurrency sweep": "workload:\n  sweep: {concurrencies: [1, 4, 16]}\n  think_time: 100ms\n  requests: 50\n  warmup: {requests: 4}\n",
		"multi-turn":        "workload:\n  concurrency: 2\n  duration: 1s\n  dataset: {type: multi_turn, turns: 3}\n  prompt_tokens: {dist: lognormal, mean: 50, stddev: 20, max: 200}\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := parseIn("ok.yaml", []byte(head+yaml), noEnv)
			if err != nil {
				t.Fatalf("does not load:\n%v", err)
			}
			out, err := s.Resolved()
			if err != nil {
				t.Fatal(err)
			}
			back, err := withEngine(parse("resolved.yaml", out, s.src, noEnv))
			if err != nil {
				t.Fatalf("resolved form does not load:\n%v\n%s", err, out)
			}
			if diff := cmp.Diff(s, back, sameScenario); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}
