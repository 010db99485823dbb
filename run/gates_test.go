package run

import (
	"encoding/json"
	"errors"
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
func TestGateVerdictsInTheReports(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, `
name: verdicts
engine: {kind: sim, preset: tiny, process: inline}
workload: {concurrency: 2, requests: 6, prompt_tokens: 8, output_tokens: 4}
gates: {thresholds: ["client.requests.failed == 0"]}
`)
	var out strings.Builder
	res, err := Run(t.Context(), Config{Scenario: path, RunsDir: t.TempDir(), Thresholds: []string{"client.ttft.p50 < 1us"}}, IO{Stdout: &out})
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
		if gatesAt < 0 || validAt < gatesAt || !strings.Contains(string(md), "`client.ttft.p50 < 1us`") {
			t.Errorf("%s: report.md does not open with the gates:\n%s", when, md)
		}
	}
	check("after the run")
	if _, err := Finalize(res.Dir, nil); err != nil {
		t.Fatal(err)
	}
	check("rebuilt")
}
