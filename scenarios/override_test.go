package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim"
)

const overrideBase = `name: base
engine: {kind: sim, preset: tiny}
workload:
  concurrency: 4
  duration: 10s
  prompt_tokens: 128
  output_tokens: 64
`

// TestOverrides applies --set values to a scenario: they replace, add and
// unset fields, are decoded as strictly as the file, and an error in one
// names the --set rather than a line of the file.
func TestOverrides(t *testing.T) {
	tests := []struct {
		name    string
		sets    []string
		check   func(t *testing.T, s Scenario)
		wantErr []string // substrings, each in the error
	}{
		{name: "replace a scalar", sets: []string{"workload.concurrency=32"}, check: func(t *testing.T, s Scenario) {
			if s.Workload.Concurrency != 32 {
				t.Errorf("concurrency %d, want 32", s.Workload.Concurrency)
			}
		}},
		{name: "switch the load shape", sets: []string{"workload.concurrency=", "workload.rate=20", "workload.arrival=poisson"}, check: func(t *testing.T, s Scenario) {
			if s.Workload.Concurrency != 0 || s.Workload.Rate != 20 || s.Workload.Arrival != "poisson" {
				t.Errorf("workload %+v, want an open loop at 20/s", s.Workload)
			}
		}},
		{name: "a mapping value", sets: []string{"workload.prompt_tokens={dist: uniform, min: 8, max: 64}"}, check: func(t *testing.T, s Scenario) {
			if s.Workload.Prompt.Dist != "uniform" {
				t.Errorf("prompt_tokens %+v, want uniform", s.Workload.Prompt)
			}
		}},
		{name: "a field the file lacks, under a mapping it lacks", sets: []string{"slo.ttft=200ms", "engine.sim.max_running_requests=2"}, check: func(t *testing.T, s Scenario) {
			if s.SLO == nil || s.SLO.TTFT != 200*time.Millisecond {
				t.Errorf("slo %+v, want ttft 200ms", s.SLO)
			}
			if s.Engine.Sim.(*sim.Params).MaxRunningRequests != 2 {
				t.Errorf("max_running_requests %d, want 2", s.Engine.Sim.(*sim.Params).MaxRunningRequests)
			}
		}},
		{name: "later wins", sets: []string{"seed=3", "seed=9"}, check: func(t *testing.T, s Scenario) {
			if s.Seed != 9 {
				t.Errorf("seed %d, want the last --set's 9", s.Seed)
			}
		}},
		{name: "wrong type names the --set", sets: []string{"workload.concurrency=many"},
			wantErr: []string{"--set workload.concurrency=many: workload.concurrency: want"}},
		{name: "unknown field names the --set", sets: []string{"workload.concurency=8"},
			wantErr: []string{"--set workload.concurency=8: workload.concurency: unknown field", "concurrency"}},
		{name: "two shapes at once", sets: []string{"workload.rate=5"}, wantErr: []string{"workload"}},
		{name: "into a scalar", sets: []string{"workload.prompt_tokens.dist=uniform"},
			wantErr: []string{"--set workload.prompt_tokens.dist=uniform: workload.prompt_tokens is", "not a mapping", "--set 'workload.prompt_tokens={...}'"}},
		{name: "not YAML", sets: []string{"workload.prompt_tokens={dist: [}"}, wantErr: []string{"the value is not YAML"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var os []Override
			for _, s := range tt.sets {
				o, err := ParseOverride(s)
				if err != nil {
					t.Fatal(err)
				}
				os = append(os, o)
			}
			s, err := Parse("base.yaml", []byte(overrideBase), os...)
			if err == nil {
				err = s.ResolveEngine(sim.Model{})
			}
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error, want %q", tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
			// The resolved copy a run directory keeps shows the override.
			out, err := s.Resolved()
			if err != nil {
				t.Fatal(err)
			}
			again, err := Parse("resolved.yaml", out)
			if err == nil {
				err = again.ResolveEngine(sim.Model{})
			}
			if err != nil {
				t.Fatalf("the resolved scenario does not load: %v\n%s", err, out)
			}
			tt.check(t, again)
		})
	}
}

func TestParseOverride(t *testing.T) {
	for _, tt := range []struct {
		in, path, value, err string
	}{
		{in: "workload.rate=20", path: "workload.rate", value: "20"},
		{in: "workload.prompt_tokens={dist: fixed, value: 3}", path: "workload.prompt_tokens", value: "{dist: fixed, value: 3}"},
		{in: "model=a=b", path: "model", value: "a=b"},
		{in: "workload.think_time=", path: "workload.think_time", value: ""},
		{in: "rate", err: "want FIELD=VALUE"},
		{in: "=3", err: "want FIELD=VALUE"},
		{in: "workload..rate=3", err: "not a dotted field path"},
		{in: "scrape.targets[0]=http://h/metrics", err: "not a dotted field path"},
	} {
		o, err := ParseOverride(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || o.Path != tt.path || o.Value != tt.value {
			t.Errorf("%q: %+v, %v; want path %q value %q", tt.in, o, err, tt.path, tt.value)
		}
	}
}

// FuzzOverride applies arbitrary --set text to a scenario: it may be
// refused, never panic, and an accepted one decodes or fails with errors.
func FuzzOverride(f *testing.F) {
	for _, s := range []string{"workload.rate=20", "slo.ttft=1s", "workload.prompt_tokens={dist: uniform, min: 1, max: 9}",
		"workload=", "engine.sim.kv_blocks=[1, 2]", "a.b.c.d=&x [*x]", "name=${X:-y}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, set string) {
		o, err := ParseOverride(set)
		if err != nil {
			return
		}
		_, _ = parse("base.yaml", []byte(overrideBase), source{dir: "."}, noEnv, o)
	})
}
