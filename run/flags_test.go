package run

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
)

// A scenario built from flags, written as the run directory keeps it and
// loaded back as a file, plans the same requests, byte for byte: the rerun
// it prints reproduces the run.
func TestFlagsScenarioFileReproducesThePlan(t *testing.T) {
	t.Parallel()
	noEnv := func(string) (string, bool) { return "", false }
	f := &scenarios.Flags{URL: "http://127.0.0.1:1", Rate: 5, Requests: 30, PromptTokens: 100, OutputTokens: 20, Seed: 3}
	sc, plan, err := load("", f, []string{"workload.output_tokens={dist: uniform, min: 10, max: 40}"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	resolved, err := sc.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), rundir.ScenarioFile)
	if err := os.WriteFile(path, resolved, 0o644); err != nil {
		t.Fatal(err)
	}
	sc2, plan2, err := load(path, nil, nil, noEnv)
	if err != nil {
		t.Fatalf("the scenario.yaml of a run from flags does not load: %v\n%s", err, resolved)
	}
	var a, b bytes.Buffer
	if err := WritePlan(&a, sc, plan, 30, true); err != nil {
		t.Fatal(err)
	}
	if err := WritePlan(&b, sc2, plan2, 30, true); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() || !strings.Contains(a.String(), `"max_tokens"`) {
		t.Errorf("the plans differ:\n%s\n---\n%s", a.String(), b.String())
	}
}

// A run has one scenario: a file and flags together, or neither, is the
// user's to fix, and the message says how.
func TestFlagsOrFile(t *testing.T) {
	t.Parallel()
	f := &scenarios.Flags{URL: "http://h:1", Concurrency: 2, Duration: time.Second}
	for _, tt := range []struct {
		path  string
		flags *scenarios.Flags
		want  string
	}{
		{"chat.yaml", f, "chat.yaml and flags that build a scenario (--url, --concurrency, --duration) both give it"},
		{"", nil, "no scenario: give a SCENARIO.yaml, or --url URL"},
	} {
		_, err := Run(t.Context(), Config{Scenario: tt.path, Flags: tt.flags, RunsDir: t.TempDir()}, IO{})
		if !isConfigError(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q with flags %v: %v; want a *ConfigError with %q", tt.path, tt.flags != nil, err, tt.want)
		}
	}
}

// ScenarioFile names the scenario.yaml that reruns a run, or a trial set's
// first trial's.
func TestScenarioFile(t *testing.T) {
	t.Parallel()
	set := fakeTrialSet(t, 2)
	for _, tt := range []struct{ dir, want string }{
		{"", ""},
		{set, filepath.Join(set, "trial-1", rundir.ScenarioFile)},
		{filepath.Join(set, "trial-2"), filepath.Join(set, "trial-2", rundir.ScenarioFile)},
	} {
		if got := ScenarioFile(tt.dir); got != tt.want {
			t.Errorf("ScenarioFile(%q) = %q, want %q", tt.dir, got, tt.want)
		}
	}
}
