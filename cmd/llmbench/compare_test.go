package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report/comparison"
)

// TestCompareCommand runs the built-in engine at two concurrencies and
// compares the runs: the phases are matched, the differing concurrency is
// named, and every format renders.
func TestCompareCommand(t *testing.T) {
	t.Parallel()
	runs := t.TempDir()
	var dirs []string
	for _, users := range []string{"2", "4"} {
		path := writeScenario(t, "name: cmp"+users+"\nengine: {kind: sim, preset: tiny}\nworkload: {concurrency: "+users+", requests: 12, prompt_tokens: 16, output_tokens: 8}\n")
		cio, _, stderr := testIO(nil)
		if code := execute(context.Background(), cio, []string{"run", "--output", "plain", "--runs", runs, path}); code != exitOK {
			t.Fatalf("run: exit %d\n%s", code, stderr.String())
		}
		matches, _ := filepath.Glob(filepath.Join(runs, "*-cmp"+users))
		if len(matches) != 1 {
			t.Fatalf("run directories %v", matches)
		}
		dirs = append(dirs, matches[0])
	}
	cio, stdout, stderr := testIO(nil)
	if code := execute(context.Background(), cio, []string{"compare", "--format", "json", dirs[0], dirs[1]}); code != exitOK {
		t.Fatalf("compare: exit %d\n%s", code, stderr.String())
	}
	var c comparison.Comparison
	if err := json.Unmarshal([]byte(stdout.String()), &c); err != nil {
		t.Fatalf("compare --format json: %v\n%s", err, stdout.String())
	}
	if c.Schema != comparison.Schema || len(c.Comparisons) != 1 || len(c.Comparisons[0].Phases) != 1 {
		t.Fatalf("comparison %+v", c)
	}
	found := false
	for _, d := range c.Comparisons[0].Differences {
		found = found || (d.Field == "workload.concurrency" && d.Baseline == "2" && d.Run == "4")
	}
	if !found {
		t.Errorf("differences %+v lack workload.concurrency 2 vs 4", c.Comparisons[0].Differences)
	}
	for format, want := range map[string]string{"text": "WARNING the runs measured different things", "md": "| client.ttft.p99 |", "html": `<figure class="chart" id="compare-ttft">`} {
		cio, stdout, stderr := testIO(nil)
		if code := execute(context.Background(), cio, []string{"compare", "--format", format, dirs[0], dirs[1]}); code != exitOK || !strings.Contains(stdout.String(), want) {
			t.Errorf("compare --format %s: exit %d, output lacks %q:\n%s%s", format, code, want, stdout.String(), stderr.String())
		}
	}
	cio, _, stderr = testIO(nil)
	if code := execute(context.Background(), cio, []string{"compare", "--format", "yaml", dirs[0], dirs[1]}); code != exitUsage || !strings.Contains(stderr.String(), "--format") {
		t.Errorf("--format yaml: exit %d, want %d; %s", code, exitUsage, stderr.String())
	}
	if _, err := os.Stat(dirs[0]); err != nil {
		t.Fatal(err)
	}
}
