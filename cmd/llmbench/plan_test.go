package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/internal/testkit"
	"github.com/llmbench-org/llmbench/run"
)

// runCmd runs one of this file's commands with args and returns its output.
func runCmd(t *testing.T, newCmd func() *cobraCommand, args ...string) (string, error) {
	t.Helper()
	cmd := newCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// exampleFiles: the example scenarios on disk, as a user has them.
func exampleFiles(t *testing.T) string { return testkit.ExampleFiles(t) }

// plan's flags: -n and --json reach the plan, a negative -n is a usage
// error (what the plan prints is run.WritePlan's, tested in run).
func TestPlanFlags(t *testing.T) {
	t.Parallel()
	path := filepath.Join(exampleFiles(t), "quickstart.yaml")
	out, err := runCmd(t, newPlanCmdForTest, "plan", "--json", "-n", "3", path)
	var v run.PlanJSON
	if err != nil || json.Unmarshal([]byte(out), &v) != nil || len(v.Requests) != 3 {
		t.Errorf("plan --json -n 3: %v, %d requests\n%s", err, len(v.Requests), out)
	}
	out, err = runCmd(t, newPlanCmdForTest, "plan", "-n", "0", path)
	if err != nil || !strings.Contains(out, "PHASE") || strings.Contains(out, "INDEX") {
		t.Errorf("plan -n 0: %v\n%s", err, out)
	}
	if _, err := runCmd(t, newPlanCmdForTest, "plan", "-n", "-1", path); exitCode(err) != exitUsage {
		t.Errorf("plan -n -1: %v, want a usage error", err)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	dir := exampleFiles(t)
	good := filepath.Join(dir, "quickstart.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\nengine: {kind: sim}\nworkload:\n  concurrency: 2\n  duration: 1s\n  colour: red\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing-data.yaml")
	if err := os.WriteFile(missing, []byte("name: m\nengine: {kind: sim}\nworkload:\n  concurrency: 1\n  duration: 1s\n  dataset: {type: jsonl, path: prompts.jsonl}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	brokenData := filepath.Join(dir, "broken-data.yaml")
	os.WriteFile(filepath.Join(dir, "broken.jsonl"), []byte("{\"prompt\": \"ok\"}\n{\"prompt\": 3}\n"), 0o644)
	if err := os.WriteFile(brokenData, []byte("name: b\nengine: {kind: sim}\nworkload:\n  concurrency: 1\n  duration: 1s\n  dataset: {type: jsonl, path: broken.jsonl}\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	badGate := filepath.Join(dir, "bad-gate.yaml")
	if err := os.WriteFile(badGate, []byte("name: g\nengine: {kind: sim}\nworkload: {concurrency: 1, duration: 1s}\ngates:\n  thresholds: [\"client.ttft.p99 < 5\", \"phase[warmup].client.ttft.p99 < 1s\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	out, err := runCmd(t, newValidateCmdForTest, "validate", good)
	if err != nil || !strings.Contains(out, "quickstart.yaml: ok") {
		t.Errorf("valid file: %q, %v", out, err)
	}
	_, err = runCmd(t, newValidateCmdForTest, "validate", good, bad, missing, brokenData, badGate)
	if exitCode(err) != exitUsage {
		t.Fatalf("invalid files: error %v, want a config error (exit 2)", err)
	}
	for _, want := range []string{
		"bad.yaml:6:3: workload.colour: unknown field",
		"missing-data.yaml:6:32: workload.dataset.path: cannot read prompts.jsonl",
		"broken.jsonl:2: prompt: want a string, got a JSON number",
		`bad-gate.yaml: gates.thresholds[0]: gate "client.ttft.p99 < 5": column 19`,
		`bad-gate.yaml: gates.thresholds[1]: gate "phase[warmup].client.ttft.p99 < 1s": the plan has no phase "warmup" (its phases: main)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	out, err = runCmd(t, newValidateCmdForTest, "validate", "--resolved", good)
	if err != nil || !strings.Contains(out, "preset: h200-llama3-8b") || !strings.Contains(out, "late_after: 10ms") {
		t.Errorf("--resolved: %v\n%s", err, out)
	}
	if _, err := runCmd(t, newValidateCmdForTest, "validate"); err == nil {
		t.Error("validate without a file succeeded")
	}
}
