package workload

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/internal/inputfile"

	"github.com/llmbench-org/llmbench/scenarios"
)

// A line over inputfile.DataLineBytes in any line-oriented data file is refused with
// the file, the line and the limit, not bufio's "token too long".
func TestLongLineNamesFileAndLine(t *testing.T) {
	long := bytes.Repeat([]byte("x"), inputfile.DataLineBytes+1)
	file := func(first, second string) []byte {
		return bytes.Join([][]byte{[]byte(first), []byte(second), long, []byte(first)}, []byte("\n"))
	}
	want := fmt.Sprintf(":3: line longer than %d MiB (the bound on one line of a data file)", inputfile.DataLineBytes>>20)
	check := func(name string, err error) {
		t.Helper()
		if err == nil || err.Error() != name+want {
			t.Errorf("%s: error %v, want %q", name, err, name+want)
		}
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prompts.jsonl"), file(`{"prompt": "a b"}`, `{"prompt": "c"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Parse(filepath.Join(dir, "s.yaml"), []byte(
		"name: long\nseed: 1\nengine: {kind: sim}\nworkload: {concurrency: 1, requests: 1, dataset: {type: jsonl, path: prompts.jsonl}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewPlan(s)
	if err == nil || !strings.HasSuffix(err.Error(), "prompts.jsonl"+want) {
		t.Errorf("NewPlan: error %v, want it to end %q", err, "prompts.jsonl"+want)
	}

	_, err = parseHistogram("bins.csv", bytes.NewReader(file("tokens,weight", "5,1")))
	check("bins.csv", err)
	_, _, err = parseTrace("mooncake", "trace.jsonl", bytes.NewReader(file(`{"timestamp": 0, "input_length": 3, "output_length": 2}`, `{"timestamp": 1, "input_length": 3, "output_length": 2}`)))
	check("trace.jsonl", err)

	// A line of exactly inputfile.DataLineBytes is read.
	ok := bytes.Repeat([]byte(" "), inputfile.DataLineBytes)
	copy(ok, `{"prompt": "a b"}`)
	if _, err := parseJSONL("p.jsonl", bytes.NewReader(ok)); err != nil {
		t.Errorf("a line of inputfile.DataLineBytes: %v", err)
	}
}

// base is a valid scenario for NewPlan's own bounds to be tried on: the
// fields under test are set afterwards, past the scenario's validation.
func base(t *testing.T) scenarios.Scenario {
	t.Helper()
	return scenario(t, "name: absurd\nseed: 1\nengine: {kind: sim}\nworkload: {concurrency: 1, requests: 3, prompt_tokens: 10, output_tokens: 10}\n")
}

// Lengths and rates that a scenario can hold but no run can honour are
// refused with the bound, instead of exhausting memory, never ending or
// being clamped to nonsense.
func TestNewPlanRefusesAbsurdValues(t *testing.T) {
	t.Parallel()
	fixed := func(n int) scenarios.Length { return scenarios.Length{Dist: scenarios.DistFixed, Value: n} }
	logn := func(mean, sd float64) scenarios.Length {
		return scenarios.Length{Dist: scenarios.DistLognormal, Mean: mean, StdDev: sd, Min: 1}
	}
	cases := []struct {
		name string
		edit func(*scenarios.Scenario)
		want string
	}{
		{"prompt 1e9", func(s *scenarios.Scenario) { s.Workload.Prompt = fixed(1e9) }, "prompt_tokens: length 1e+09 is above the maximum of 10000000 tokens"},
		{"output 1e9", func(s *scenarios.Scenario) { s.Workload.Output = fixed(1e9) }, "output_tokens: length 1e+09 is above the maximum of 10000000 tokens"},
		{"uniform max", func(s *scenarios.Scenario) {
			s.Workload.Prompt = scenarios.Length{Dist: scenarios.DistUniform, Min: 1, Max: math.MaxInt32}
		}, "max 2.147483647e+09 is above the maximum of 10000000 tokens"},
		{"lognormal mean 1e300", func(s *scenarios.Scenario) { s.Workload.Prompt = logn(1e300, 1) }, "mean 1e+300 is above the maximum of 10000000 tokens"},
		{"lognormal draws overflow", func(s *scenarios.Scenario) { s.Workload.Prompt = logn(1000, 1e300) }, "the draws overflow"},
		{"normal stddev infinite", func(s *scenarios.Scenario) {
			s.Workload.Output = scenarios.Length{Dist: scenarios.DistNormal, Mean: 100, StdDev: math.Inf(1)}
		}, "must be finite numbers"},
		{"normal NaN", func(s *scenarios.Scenario) {
			s.Workload.Output = scenarios.Length{Dist: scenarios.DistNormal, Mean: math.NaN(), StdDev: 1}
		}, "must be finite numbers"},
		{"lognormal tail past the bound", func(s *scenarios.Scenario) { s.Workload.Prompt = logn(1e6, 1e7) }, "above the maximum of 10000000 per request (workload.MaxTokens); set a max"},
		{"prefix", func(s *scenarios.Scenario) {
			s.Workload.Dataset = scenarios.Dataset{Type: scenarios.DatasetSharedPrefix, Groups: 1, PromptsPerGroup: 1, PrefixTokens: 2e9}
		}, "prefix_tokens 2000000000 is above the maximum of 10000000 tokens"},
		{"rate 1e300", func(s *scenarios.Scenario) {
			s.Workload.Concurrency, s.Workload.Rate, s.Workload.Arrival = 0, 1e300, scenarios.ArrivalPoisson
		}, "rate 1e+300/s is above the maximum of 1000000 requests/s"},
		{"rate NaN", func(s *scenarios.Scenario) {
			s.Workload.Concurrency, s.Workload.Rate, s.Workload.Arrival = 0, math.NaN(), scenarios.ArrivalConstant
		}, "rate NaN/s is above the maximum"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := base(t)
			c.edit(&s)
			_, err := NewPlan(s)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewPlan: error %v, want it to say %q", err, c.want)
			}
		})
	}
	// The bounds themselves are allowed.
	s := base(t)
	s.Workload.Prompt, s.Workload.Output = fixed(MaxTokens), logn(1000, 3000)
	if _, err := NewPlan(s); err != nil {
		t.Errorf("lengths at the bound refused: %v", err)
	}
	s = base(t)
	s.Workload.Concurrency, s.Workload.Rate, s.Workload.Arrival = 0, MaxRate, scenarios.ArrivalConstant
	if _, err := NewPlan(s); err != nil {
		t.Errorf("rate at the bound refused: %v", err)
	}
}

// Lengths read from data files are held to the same bound, at their line.
func TestDataFileLengthsBounded(t *testing.T) {
	t.Parallel()
	_, err := parseJSONL("p.jsonl", bytes.NewReader([]byte("{\"prompt\": \"a\"}\n{\"prompt\": \"a\", \"max_tokens\": 20000000}\n")))
	if want := "p.jsonl:2: max_tokens 20000000 is above the maximum of 10000000 tokens"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("jsonl: %v, want %q", err, want)
	}
	_, err = parseHistogram("h.csv", bytes.NewReader([]byte("5,1\n1,20000000,1\n")))
	if want := "h.csv:2: length 20000000 is above the maximum"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("histogram: %v, want %q", err, want)
	}
	_, _, err = parseTrace("mooncake", "m.jsonl", bytes.NewReader([]byte(`{"timestamp": 0, "input_length": 3000000000, "output_length": 2}`)))
	if want := "m.jsonl:1: input_length 3000000000 is above the maximum"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("mooncake: %v, want %q", err, want)
	}
}
