package run

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// Gate without gates says so and passes.
func TestGateWithoutGates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, rundir.RunFile), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if rep, err := Gate(dir, GateConfig{}, &out); err != nil || rep != nil {
		t.Fatalf("no gates: %v, %+v", err, rep)
	}
	if !strings.Contains(out.String(), "gates: none") {
		t.Errorf("output %q", out.String())
	}
}

// A run directory whose files do not load fails its gates (exit 3 at the
// command line), naming why, rather than failing the tool.
func TestGateOfARunThatDoesNotLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, rundir.RunFile), []byte("{torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	_, err := Gate(dir, GateConfig{Thresholds: []string{"client.ttft.p99 < 1s"}}, &out)
	var gf *GatesFailed
	if !errors.As(err, &gf) || gf.Unevaluable != 1 || !strings.Contains(err.Error(), "load "+dir) {
		t.Errorf("error %v, want the gates failed as unevaluable, naming the directory", err)
	}
}

// The gates' verdicts are in every report of the run, and a rebuilt report
// shows the same: a CI job summary made from report.md says why it failed.
// The failing gate is a count, which decides whether or not the busy host
// left the run valid (a latency gate of a run not valid is inconclusive).
func TestGateVerdictsInTheReports(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, `
name: verdicts
engine: {kind: sim, preset: tiny, process: inline}
workload: {concurrency: 2, requests: 6, prompt_tokens: 8, output_tokens: 4}
gates: {thresholds: ["client.requests.failed == 0"]}
`)
	var out strings.Builder
	res, err := Run(t.Context(), Config{Scenario: path, RunsDir: t.TempDir(), Thresholds: []string{"client.requests.ok == 0"}}, IO{Stdout: &out})
	var gf *GatesFailed
	if !errors.As(err, &gf) || gf.Failed != 1 {
		t.Fatalf("run: %v, want one gate failed", err)
	}
	check := func(when string) {
		var s report.Summary
		b, err := os.ReadFile(filepath.Join(res.Dir, rundir.SummaryFile))
		if err == nil {
			err = json.Unmarshal(b, &s)
		}
		if err != nil {
			t.Fatal(err)
		}
		if g := s.Gates; g == nil || g.Passed || g.Pass != 1 || g.Fail != 1 || len(g.Results) != 2 {
			t.Errorf("%s: summary.json gates %+v, want 1 passed and 1 failed", when, s.Gates)
		}
		md, err := os.ReadFile(filepath.Join(res.Dir, rundir.MarkdownFile))
		if err != nil {
			t.Fatal(err)
		}
		gatesAt, validAt := strings.Index(string(md), "**Gates failed**: 1 passed, 1 failed"), strings.Index(string(md), "alid**") // **Valid** or **Not valid**
		if gatesAt < 0 || validAt < gatesAt || !strings.Contains(string(md), "`client.requests.ok == 0`") {
			t.Errorf("%s: report.md does not open with the gates:\n%s", when, md)
		}
	}
	check("after the run")
	if _, err := Finalize(res.Dir, nil); err != nil {
		t.Fatal(err)
	}
	check("rebuilt")
}

// `llmbench gate` re-checks every gate the run was run with, its --threshold
// ones included, against the baseline it is given (or the run's own), and a
// flag it cannot use is the user's error, not a silent pass.
func TestGateRechecksTheRunsGates(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, `
name: regate
engine: {kind: sim, preset: tiny, process: inline}
workload: {concurrency: 2, requests: 6, prompt_tokens: 8, output_tokens: 4}
`)
	runs := t.TempDir()
	base, err := Run(t.Context(), Config{Scenario: path, RunsDir: runs}, IO{Stdout: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	// The run's own gates: one absolute that fails (a count: it decides
	// whatever the host did), one regression that passes (no run is ten
	// times slower than an identical one) when both runs are valid, and is
	// inconclusive, saying so, when the busy host made one not valid.
	given := []string{"client.requests.ok == 0", "client.e2e.mean regression < 1000%"}
	res, err := Run(t.Context(), Config{Scenario: path, RunsDir: runs, Baseline: base.Dir, Thresholds: given}, IO{Stdout: io.Discard})
	var gf *GatesFailed
	if !errors.As(err, &gf) || gf.Failed != 1 {
		t.Fatalf("run: %v, want one gate failed", err)
	}

	cases := []struct {
		name   string
		cfg    GateConfig
		failed int    // gates failed (-1: a usage error)
		lines  int    // gates reported
		says   string // in the output or the error
	}{
		{"the run's own gates and baseline", GateConfig{}, 1, 2, "the run's own"},
		{"another baseline", GateConfig{Baseline: res.Dir}, 1, 2, "regression"},
		{"a threshold given again is one gate", GateConfig{Thresholds: given[:1]}, 1, 2, "ok == 0"},
		{"one more", GateConfig{Thresholds: []string{"client.requests.failed == 0"}}, 1, 3, "failed == 0"},
	}
	for _, c := range cases {
		var out strings.Builder
		rep, err := Gate(res.Dir, c.cfg, &out)
		if !errors.As(err, &gf) || gf.Failed != c.failed || rep == nil || len(rep.Results) != c.lines {
			t.Errorf("%s: %v (report %v), want %d of %d gates failed", c.name, err, rep, c.failed, c.lines)
			continue
		}
		for _, r := range rep.Results {
			// The baseline the regression reads: the run's own (base) unless
			// the case gives another (the run itself).
			baseValid := base.Summary.Health.Valid
			if c.cfg.Baseline == res.Dir {
				baseValid = res.Summary.Health.Valid
			}
			if strings.Contains(r.Gate, "regression") && (!baseValid || !res.Summary.Health.Valid) {
				if r.Status != "inconclusive" || !strings.Contains(r.Reason, "not valid") {
					t.Errorf("%s: %s is %s (%s), want it inconclusive: a run is not valid", c.name, r.Gate, r.Status, r.Reason)
				}
				continue
			}
			if strings.Contains(r.Gate, "regression") && r.Status != "pass" {
				t.Errorf("%s: %s is %s (%s), want it evaluated against the baseline and passed", c.name, r.Gate, r.Status, r.Reason)
			}
		}
		if !strings.Contains(out.String(), c.says) {
			t.Errorf("%s: output does not say %q:\n%s", c.name, c.says, out.String())
		}
	}

	// A baseline no gate can use, or a JUnit file for no gates, is an error.
	for _, c := range []struct {
		dir string
		cfg GateConfig
	}{
		{base.Dir, GateConfig{Baseline: res.Dir}},
		{base.Dir, GateConfig{JUnit: filepath.Join(t.TempDir(), "junit.xml")}},
		{base.Dir, GateConfig{Baseline: res.Dir, Thresholds: []string{"client.ttft.p50 < 10s"}}},
	} {
		_, err := Gate(c.dir, c.cfg, io.Discard)
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("gate %+v: %v, want a usage error", c.cfg, err)
		}
	}
}
