package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/scenarios"
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

// exampleFiles copies the embedded example scenarios and their data files to
// a temporary directory, as a user would have them on disk.
func exampleFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	err := fs.WalkDir(scenarios.Examples(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(scenarios.Examples(), path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, path), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPlanIsByteIdentical runs `llmbench plan` twice on every example, in
// text and JSON, and requires identical output.
func TestPlanIsByteIdentical(t *testing.T) {
	t.Parallel()
	dir := exampleFiles(t)
	names, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(names) < 7 {
		t.Fatalf("%d examples", len(names))
	}
	for _, path := range names {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			shown := 0 // requests the JSON plan shows: 20, or fewer when the first phase sends fewer
			for _, args := range [][]string{{"plan", "--json", "-n", "20", path}, {"plan", "-n", "20", path}} {
				a, err := runCmd(t, newPlanCmdForTest, args...)
				if err != nil {
					t.Fatalf("%v: %v", args, err)
				}
				b, _ := runCmd(t, newPlanCmdForTest, args...)
				if a != b {
					t.Errorf("%v printed two different plans:\n%s\n---\n%s", args, a, b)
				}
				if args[1] == "--json" {
					var v planJSON
					if err := json.Unmarshal([]byte(a), &v); err != nil || len(v.Requests) == 0 || len(v.Requests) > 20 || len(v.Summary.Phases) == 0 {
						t.Errorf("JSON plan: %v (%d requests)", err, len(v.Requests))
					}
					if first := v.Summary.Phases[0]; len(v.Requests) < 20 && first.Requests != len(v.Requests) {
						t.Errorf("JSON plan shows %d requests; the first phase %+v sends more", len(v.Requests), first)
					}
					shown = len(v.Requests)
				} else if !strings.Contains(a, "PHASE") || !strings.Contains(a, fmt.Sprintf("first %d requests", shown)) ||
					!strings.Contains(a, "request timeout ") || !strings.Contains(a, "stops early ") {
					t.Errorf("text plan lacks its tables:\n%s", a)
				}
			}
		})
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
