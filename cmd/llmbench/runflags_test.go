package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/client"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// The README's newcomer path: `llmbench serve` in one terminal (here a
// child process of this test binary acting as llmbench), `llmbench run
// --url …` in another. The run works, its directory keeps the scenario the
// flags built (the golden file, the engine's port aside), the run ends
// with the command that reruns it, and that command plans and sends the
// same requests.
func TestRunFromFlagsAgainstServe(t *testing.T) {
	t.Parallel()
	base := serveEngine(t) // http://127.0.0.1:PORT/v1
	root := strings.TrimSuffix(base, "/v1")
	runs := t.TempDir()
	cio, stdout, stderr := testIO(nil)
	code := execute(context.Background(), cio, []string{"run", "--url", root, "--concurrency", "3", "--requests", "24",
		"--prompt-tokens", "48", "--output-tokens", "12", "--seed", "5", "--output-dir", runs, "--view", "plain"})
	if code != exitOK {
		t.Fatalf("run --url: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	out := strings.TrimRight(stdout.String(), "\n")
	last := out[strings.LastIndex(out, "\n")+1:]
	rerun, ok := strings.CutPrefix(last, "rerun: llmbench run ")
	if !ok || filepath.Base(rerun) != "scenario.yaml" || !strings.HasPrefix(rerun, runs) {
		t.Fatalf("the run does not end with its rerun command: %q", last)
	}
	got, err := os.ReadFile(rerun)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(root, "http://")
	masked := strings.ReplaceAll(string(got), host, "127.0.0.1:PORT")
	masked = regexp.MustCompile(`127\.0\.0\.1-\d+`).ReplaceAllString(masked, "127.0.0.1-PORT")
	golden := filepath.Join("testdata", "run-from-flags.golden.yaml")
	if *update {
		if err := os.WriteFile(golden, []byte(masked), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if masked != string(want) {
		t.Errorf("scenario.yaml of the run from flags:\n%s\nwant (%s):\n%s", masked, golden, want)
	}

	cio2, stdout2, stderr2 := testIO(nil)
	if code := execute(context.Background(), cio2, []string{"run", rerun, "--output-dir", t.TempDir(), "--view", "plain"}); code != exitOK {
		t.Fatalf("the rerun: exit %d\n%s\n%s", code, stdout2.String(), stderr2.String())
	}
	if strings.Contains(stdout2.String(), "rerun:") {
		t.Errorf("a run of a scenario file printed a rerun line:\n%s", stdout2.String())
	}
	first := sentRequests(t, filepath.Dir(rerun))
	again := sentRequests(t, strings.TrimPrefix(lastLineWith(t, stdout2.String(), "run directory: "), "run directory: "))
	if len(first) != 24 || strings.Join(first, "\n") != strings.Join(again, "\n") {
		t.Errorf("the rerun sent other requests:\n%v\n---\n%v", first, again)
	}
}

// sentRequests are a run's requests as planned and answered, in index
// order: id, prompt length, max_tokens, tokens received.
func sentRequests(t *testing.T, dir string) []string {
	t.Helper()
	recs := readJSONL[client.Record](t, filepath.Join(dir, "requests.jsonl"))
	out := make([]string, len(recs))
	for _, r := range recs {
		if r.Index < 0 || r.Index >= len(out) {
			t.Fatalf("%s: request index %d of %d", dir, r.Index, len(recs))
		}
		out[r.Index] = fmt.Sprintf("%s %d %d %d %s", r.ID, r.TargetPromptTokens, r.MaxTokens, r.OutputTokens, r.Error)
	}
	return out
}

func lastLineWith(t *testing.T, text, prefix string) string {
	t.Helper()
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], prefix) {
			return lines[i]
		}
	}
	t.Fatalf("no line %q in:\n%s", prefix, text)
	return ""
}

// What run's scenario flags refuse, each a usage error (exit 2) naming
// what to do; the old names of --output-dir and --view still work, with a
// note.
func TestRunFlagsUsage(t *testing.T) {
	t.Parallel()
	file := writeScenario(t, "name: x\nengine: {kind: sim}\nworkload: {concurrency: 1, requests: 1}\n")
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"neither a file nor --url", []string{"run"}, []string{"no scenario: give a SCENARIO.yaml, or --url URL"}},
		{"a file and --url", []string{"run", file, "--url", "http://127.0.0.1:1"}, []string{"both give it", "--set engine.base_url=URL"}},
		{"a file and a load flag", []string{"run", file, "--rate", "3"}, []string{"(--rate) both give it"}},
		{"a load flag without --url", []string{"run", "--concurrency", "2", "--duration", "1s"}, []string{"--url: the engine's URL is required"}},
		{"no load", []string{"run", "--url", "http://127.0.0.1:1", "--duration", "1s"}, []string{"no load: give --concurrency N"}},
		{"a bad value names its flag", []string{"run", "--url", "http://127.0.0.1:1", "--concurrency", "-2", "--duration", "1s"}, []string{"--concurrency (workload.concurrency): want at least 1"}},
		{"two arguments", []string{"run", file, file}, []string{"arg"}},
		{"--output, the old --view", []string{"run", "--output", "fancy", file}, []string{"--output is now --view", "--output must be auto, tui or plain"}},
		{"--view", []string{"run", "--view", "fancy", file}, []string{"--view must be auto, tui or plain"}},
		{"--runs, the old --output-dir", []string{"run", "--runs", t.TempDir(), "--view", "tui", file}, []string{"--runs is now --output-dir", "--view tui needs a terminal"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cio, _, stderr := testIO(nil)
			if code := execute(context.Background(), cio, tt.args); code != exitUsage {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitUsage, stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
		})
	}
}

// The old names still set what they set: --runs places the run directory,
// --output picks the live view (plain: progress lines on stderr).
func TestOldFlagNamesStillWork(t *testing.T) {
	t.Parallel()
	file := writeScenario(t, "name: old\nengine: {kind: sim, preset: tiny}\nworkload: {concurrency: 1, requests: 2, prompt_tokens: 8, output_tokens: 4}\n")
	runs := t.TempDir()
	cio, stdout, stderr := testIO(nil)
	if code := execute(context.Background(), cio, []string{"run", "--runs", runs, "--output", "plain", file}); code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "*-old"))
	if len(dirs) != 1 || !strings.Contains(stdout.String(), "run directory: "+dirs[0]) || !strings.Contains(stderr.String(), "llmbench: running old against") {
		t.Errorf("run directories %v under --runs; stdout:\n%s\nstderr:\n%s", dirs, stdout.String(), stderr.String())
	}
}
