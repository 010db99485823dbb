package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/rundir"
)

const trialsYAML = "name: cli-trials\nengine: {kind: sim, preset: tiny}\nworkload: {concurrency: 2, requests: 4, prompt_tokens: 16, output_tokens: 4}\n"

// TestTrialFlags: what --repeat and ab refuse is a usage error (exit 2),
// before anything runs.
func TestTrialFlags(t *testing.T) {
	t.Parallel()
	sc := writeScenario(t, trialsYAML)
	for _, tt := range []struct {
		name     string
		args     []string
		inStderr string
	}{
		{"no trials", []string{"run", "--repeat", "0", sc}, "--repeat 0"},
		{"not a number", []string{"run", "--repeat", "many", sc}, "--repeat"},
		{"sharded set", []string{"run", "--repeat", "2", "--shard", "0/2", sc}, "--repeat with --shard"},
		{"set with a start barrier", []string{"run", "--repeat", "2", "--start-at", "2099-01-01T00:00:00Z", sc}, "--repeat with --start-at"},
		{"ab without a scenario", []string{"ab"}, "arg"},
		{"ab of three", []string{"ab", sc, sc, sc}, "arg"},
		{"ab without trials", []string{"ab", "--repeat", "0", sc}, "--repeat 0"},
		{"ab in an unknown format", []string{"ab", "--format", "xml", sc}, "--format \"xml\""},
		{"ab of a missing B", []string{"ab", sc, filepath.Join(t.TempDir(), "none.yaml")}, "none.yaml"},
		{"ab with a bad override", []string{"ab", sc, "--set-b", "workload.nope=1"}, "nope"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			runs := t.TempDir()
			cio, _, stderr := testIO(nil)
			if code := execute(context.Background(), cio, append(tt.args, "--runs", runs)); code != exitUsage {
				t.Errorf("exit code %d, want %d; stderr: %s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.inStderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.inStderr)
			}
			if entries, _ := os.ReadDir(runs); len(entries) != 0 {
				t.Errorf("a refused command left %d entries in --runs", len(entries))
			}
		})
	}
}

// TestRunRepeatThenReadTheSet: `run --repeat 2` writes a trial set; report
// reads each trial of it, and what cannot read a set (a JSON summary, a
// CSV, merge, inspect) says so, naming the trials, instead of misreading
// it.
func TestRunRepeatThenReadTheSet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built-in engine twice")
	}
	t.Parallel()
	runs := t.TempDir()
	cio, stdout, stderr := testIO(nil)
	if code := execute(context.Background(), cio, []string{"run", "--repeat", "2", "--output", "plain", "--runs", runs, writeScenario(t, trialsYAML)}); code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr.String())
	}
	entries, _ := os.ReadDir(runs)
	if len(entries) != 1 {
		t.Fatalf("--runs holds %d entries, want the one trial set", len(entries))
	}
	set := filepath.Join(runs, entries[0].Name())
	trials, err := rundir.Trials(set)
	if err != nil || len(trials) != 2 {
		t.Fatalf("trials %v, %v", trials, err)
	}
	for _, w := range []string{"trial 1 of 2 (trial-1): TTFT", "trial 2 of 2 (trial-2): TTFT", "spread over 2 trials", "trial set: " + set} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("run output lacks %q:\n%s", w, stdout.String())
		}
	}
	if !strings.Contains(stderr.String(), "(trial 2 of 2) against") {
		t.Errorf("the progress lines do not say which trial runs:\n%s", stderr.String())
	}

	cio, stdout, stderr = testIO(nil)
	if code := execute(context.Background(), cio, []string{"report", set}); code != exitOK {
		t.Fatalf("report of the set: exit %d: %s", code, stderr.String())
	}
	for _, w := range []string{"trial 1 of 2: " + trials[0], "trial 2 of 2: " + trials[1], "spread over 2 trials:", "valid in "} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("report of the set lacks %q:\n%s", w, stdout.String())
		}
	}
	if n := strings.Count(stdout.String(), "cli-trials"); n < 2 {
		t.Errorf("report of the set names the scenario %d times, want each trial's summary:\n%s", n, stdout.String())
	}

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"report json", []string{"report", "--format", "json", set}, "a trial set of 2 trials (trial-1, trial-2)"},
		{"report csv", []string{"report", "--format", "csv", set}, "give one trial, e.g. llmbench report " + trials[0]},
		{"merge the set", []string{"merge", filepath.Join(t.TempDir(), "out"), set}, "not the shards of one run"},
		{"merge what holds the set", []string{"merge", filepath.Join(t.TempDir(), "out"), runs}, "is a trial set (llmbench run --repeat) of 2 trials"},
		{"inspect the set", []string{"inspect", set}, "inspect reads an engine's /metrics"},
	} {
		cio, _, stderr := testIO(nil)
		if code := execute(context.Background(), cio, tt.args); code != exitUsage {
			t.Errorf("%s: exit %d, want %d: %s", tt.name, code, exitUsage, stderr.String())
		}
		if !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%s: stderr %q lacks %q", tt.name, stderr.String(), tt.want)
		}
	}
}

// TestRunRepeatOneIsARun: --repeat 1 is the plain run: a run directory, no
// trial set, the run's own output.
func TestRunRepeatOneIsARun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built-in engine")
	}
	t.Parallel()
	runs := t.TempDir()
	cio, stdout, stderr := testIO(nil)
	if code := execute(context.Background(), cio, []string{"run", "--repeat", "1", "--output", "plain", "--runs", runs, writeScenario(t, trialsYAML)}); code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr.String())
	}
	entries, _ := os.ReadDir(runs)
	if len(entries) != 1 {
		t.Fatalf("--runs holds %d entries", len(entries))
	}
	dir := filepath.Join(runs, entries[0].Name())
	if _, err := os.Stat(filepath.Join(dir, rundir.RunFile)); err != nil {
		t.Errorf("not a run directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.TrialsFile)); err == nil {
		t.Error("--repeat 1 wrote a trial set")
	}
	if out := stdout.String(); strings.Contains(out, "trial set") || strings.Contains(out, "trial 1") || !strings.HasSuffix(out, "run directory: "+dir+"\n") {
		t.Errorf("--repeat 1 printed other than a run does:\n%s", out)
	}
}

// TestABComparesAsCompareDoes: `llmbench ab` runs the pair and then prints
// exactly what `llmbench compare A B` prints of its two sets, with the same
// outcome.
func TestABComparesAsCompareDoes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built-in engine twice")
	}
	t.Parallel()
	runs := t.TempDir()
	cio, stdout, stderr := testIO(nil)
	code := execute(context.Background(), cio, []string{"ab", "--repeat", "1", "--output", "plain", "--runs", runs,
		"--set-b", "workload.output_tokens=8", "--format", "json", writeScenario(t, trialsYAML)})
	entries, _ := os.ReadDir(runs)
	if len(entries) != 1 {
		t.Fatalf("--runs holds %d entries (exit %d): %s", len(entries), code, stderr.String())
	}
	pair := filepath.Join(runs, entries[0].Name())
	if !strings.Contains(pair, "-ab-cli-trials-vs-cli-trials") {
		t.Errorf("pair directory %s", pair)
	}
	for _, side := range []string{"A", "B"} {
		if trials, err := rundir.Trials(filepath.Join(pair, side)); err != nil || len(trials) != 1 {
			t.Errorf("%s: trials %v, %v", side, trials, err)
		}
	}
	ccio, cout, cerr := testIO(nil)
	ccode := execute(context.Background(), ccio, []string{"compare", "--format", "json", filepath.Join(pair, "A"), filepath.Join(pair, "B")})
	if code != ccode {
		t.Errorf("ab exit %d, compare exit %d", code, ccode)
	}
	if !strings.HasSuffix(stdout.String(), "A/B pair: "+pair+"\n"+cout.String()) {
		t.Errorf("ab output does not end in compare's:\n%s\ncompare:\n%s", stdout.String(), cout.String())
	}
	if !strings.HasSuffix(stderr.String(), cerr.String()) {
		t.Errorf("ab stderr does not end in compare's:\n%s\ncompare:\n%s", stderr.String(), cerr.String())
	}
}

// TestRunRepeatCtrlCInTrial2: Ctrl-C while trial 2 of 3 runs drains it as
// it drains a run, keeps trial 1, starts no trial 3, and exits 1 as an
// interrupted run does; trials.json lists the two trials that exist.
func TestRunRepeatCtrlCInTrial2(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built-in engine twice")
	}
	t.Parallel()
	// Each trial lasts 4 s: the interrupt comes while trial 2 runs.
	sc := writeScenario(t, "name: cli-stop\nengine: {kind: sim, preset: tiny}\nworkload: {concurrency: 2, duration: 4s, prompt_tokens: 16, output_tokens: 8}\n")
	sigs := make(chan os.Signal, 1)
	cio, stdout, stderr := testIO(sigs)
	runs := t.TempDir()
	done := make(chan int)
	go func() {
		done <- execute(context.Background(), cio, []string{"run", "--repeat", "3", "--output", "plain", "--every", "100ms", "--runs", runs, sc})
	}()
	waitForText(t, stderr, "(trial 2 of 3) against")
	sigs <- syscall.SIGINT
	code := <-done
	if code != exitRuntime {
		t.Errorf("exit %d, want %d (interrupted)\nstderr:\n%s", code, exitRuntime, stderr.String())
	}
	entries, _ := os.ReadDir(runs)
	if len(entries) != 1 {
		t.Fatalf("--runs holds %d entries", len(entries))
	}
	set := filepath.Join(runs, entries[0].Name())
	trials, err := rundir.Trials(set)
	if err != nil || len(trials) != 2 {
		t.Fatalf("trials.json: %v, %v; want trial-1 and trial-2", trials, err)
	}
	if _, err := os.Stat(filepath.Join(set, "trial-3")); !os.IsNotExist(err) {
		t.Errorf("trial 3 started after the interrupt (stat: %v)", err)
	}
	if !strings.Contains(stderr.String(), "trial 2 of 3: interrupted") || !strings.Contains(stdout.String(), "trial 2 of 3 (trial-2):") {
		t.Errorf("the interrupt is not told as trial 2's:\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}

// waitForText waits until b holds s (a minute at most).
func waitForText(t *testing.T, b *syncBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(b.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never came:\n%s", s, b.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
