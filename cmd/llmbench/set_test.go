package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// TestSetOverridesTheScenario runs a scenario with --set: the run sends what
// the overrides say, its run directory's scenario.yaml records them, and a
// bad --set is a usage error naming it, for run, plan and validate alike.
func TestSetOverridesTheScenario(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, `
name: set
engine: {kind: sim, preset: tiny, process: inline}
workload:
  concurrency: 4
  requests: 40
  prompt_tokens: 16
  output_tokens: 8
`)
	runs := t.TempDir()
	cio, _, stderr := testIO(nil)
	code := execute(context.Background(), cio, []string{"run", "--output", "plain", "--runs", runs, path,
		"--set", "workload.requests=6", "--set", "workload.output_tokens={dist: fixed, value: 3}", "--set", "slo.ttft=10s"})
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, stderr.String())
	}
	s, dir := onlyRun(t, runs)
	if s.Client.Requests.Sent != 6 || s.Client.Tokens.Output != 18 || s.Client.Goodput == nil {
		t.Errorf("sent %d requests of %d output tokens in all, goodput %v: want the overrides' 6 × 3 and an slo",
			s.Client.Requests.Sent, s.Client.Tokens.Output, s.Client.Goodput)
	}
	kept, err := os.ReadFile(filepath.Join(dir, rundir.ScenarioFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kept), "requests: 6") || !strings.Contains(string(kept), "ttft: 10s") {
		t.Errorf("the run directory's scenario.yaml does not show the overrides:\n%s", kept)
	}

	for _, args := range [][]string{
		{"run", "--output", "plain", "--runs", runs, path},
		{"plan", path},
		{"validate", path},
	} {
		cio, stdout, stderr := testIO(nil)
		code := execute(context.Background(), cio, append(args, "--set", "workload.concurency=8"))
		if code != exitUsage || !strings.Contains(stderr.String(), "--set workload.concurency=8: workload.concurency: unknown field") {
			t.Errorf("%s with a misspelt --set: exit %d, stderr %q", args[0], code, stderr.String())
		}
		_ = stdout
	}
	cio, stdout, stderr := testIO(nil)
	if code := execute(context.Background(), cio, []string{"plan", path, "--set", "workload.requests=3", "--set", "seed=9"}); code != exitOK {
		t.Fatalf("plan: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "seed 9") || !strings.Contains(stdout.String(), "set-9-2") || strings.Contains(stdout.String(), "set-9-3") {
		t.Errorf("plan --set requests=3, seed=9:\n%s", stdout.String())
	}
}

// onlyRun summarises the one run directory under runs.
func onlyRun(t *testing.T, runs string) (report.Summary, string) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(runs, "*"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v, want one", dirs)
	}
	s, err := report.Build(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	return s, dirs[0]
}
