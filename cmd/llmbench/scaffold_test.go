package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/scenarios"
)

// llmbench init for every engine kind writes a file validate accepts; the
// sim one runs end to end; an existing file is kept without --force.
func TestInitEveryEngine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, kind := range scenarios.InitKinds {
		path := filepath.Join(dir, kind+".yaml")
		cio, stdout, stderr := testIO(nil)
		if code := execute(context.Background(), cio, []string{"init", "--engine", kind, path}); code != exitOK {
			t.Fatalf("init --engine %s: exit %d\n%s", kind, code, stderr)
		}
		if !strings.Contains(stdout.String(), "wrote "+path) {
			t.Errorf("init --engine %s says %q", kind, stdout)
		}
		cio, _, stderr = testIO(nil)
		if code := execute(context.Background(), cio, []string{"validate", path}); code != exitOK {
			t.Errorf("validate the init --engine %s scenario: exit %d\n%s", kind, code, stderr)
		}
	}
	// again, without and with --force
	path := filepath.Join(dir, "sim.yaml")
	if err := os.WriteFile(path, []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cio, _, stderr := testIO(nil)
	if code := execute(context.Background(), cio, []string{"init", path}); code != exitUsage || !strings.Contains(stderr.String(), "--force") {
		t.Errorf("init over an existing file: exit %d, %q", code, stderr)
	}
	if got, _ := os.ReadFile(path); string(got) != "edited\n" {
		t.Errorf("init replaced an existing file without --force")
	}
	cio, _, _ = testIO(nil)
	if code := execute(context.Background(), cio, []string{"init", "--force", path}); code != exitOK {
		t.Fatalf("init --force: exit %d", code)
	}
	runs := t.TempDir()
	cio, stdout, stderr := testIO(nil)
	code := execute(context.Background(), cio, []string{"run", path, "--set", "workload.duration=1s", "--set", "workload.concurrency=2",
		"--output-dir", runs, "--view", "plain"})
	if code != exitOK {
		t.Fatalf("run the init scenario: exit %d\n%s\n%s", code, stdout, stderr)
	}
	sums, _ := filepath.Glob(filepath.Join(runs, "*", "summary.json"))
	if len(sums) != 1 {
		t.Fatalf("run directories with a summary: %v", sums)
	}
	data, err := os.ReadFile(sums[0])
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Client struct {
			Requests struct{ Sent, OK, Failed int } `json:"requests"`
		} `json:"client"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if r := sum.Client.Requests; r.OK == 0 || r.Failed != 0 || r.OK != r.Sent {
		t.Errorf("the init scenario's run: %+v requests", r)
	}
	cio, _, _ = testIO(nil)
	if code := execute(context.Background(), cio, []string{"init", "--engine", "vllm", "--url", "http://x", "-"}); code != exitUsage {
		t.Errorf("init --engine vllm --url: exit %d, want %d", code, exitUsage)
	}
}

// import → validate → plan: the imported file is a scenario like any other,
// and the plan sends what the tool's command line said.
func TestImportValidatePlan(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "v.yaml")
	cio, stdout, stderr := testIO(nil)
	code := execute(context.Background(), cio, []string{"import", "vllm", "-o", path, "--", "vllm", "bench", "serve",
		"--model", "m", "--request-rate", "4", "--num-prompts", "20", "--random-input-len", "64", "--random-output-len", "16",
		"--save-result", "--profile"})
	if code != exitOK {
		t.Fatalf("import: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"not carried over: --save-result (", "not carried over: --profile ("} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout.String(), "wrote "+path) {
		t.Errorf("stdout: %q", stdout)
	}
	cio, _, stderr = testIO(nil)
	if code := execute(context.Background(), cio, []string{"validate", path}); code != exitOK {
		t.Fatalf("validate: exit %d\n%s", code, stderr)
	}
	cio, stdout, stderr = testIO(nil)
	if code := execute(context.Background(), cio, []string{"plan", "--json", "-n", "20", path}); code != exitOK {
		t.Fatalf("plan: exit %d\n%s", code, stderr)
	}
	var plan map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &plan); err != nil {
		t.Fatalf("plan --json: %v", err)
	}
	text := stdout.String()
	for _, want := range []string{`"load": "open loop, poisson, 4 requests/s"`, `"requests": 20`, `"prompt_tokens": 64`, `"max_tokens": 16`} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan lacks %s:\n%.2000s", want, text)
		}
	}
	// the tool's arguments must follow --; an unknown one is refused
	for _, args := range [][]string{{"import", "vllm", "--model"}, {"import", "vllm", "--", "--no-such"}, {"import", "aiperf", "--", "--x"}} {
		cio, _, _ = testIO(nil)
		if code := execute(context.Background(), cio, args); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
}
