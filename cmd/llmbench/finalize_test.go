package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/llmbench-org/llmbench/rundir"
)

// finalizedFiles are the files a run directory's raw files become.
var finalizedFiles = []string{rundir.SummaryFile, "report.html", rundir.MarkdownFile}

// TestRunReportMergeWriteTheSameFiles: `llmbench run`, `report` and `merge`
// finalize a run directory the same way (run.Finalize): each writes
// summary.json, report.html and report.md, and `report` rebuilds exactly
// those from the raw files, adding nothing else.
func TestRunReportMergeWriteTheSameFiles(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, `
name: files
seed: 5
engine: {kind: sim, preset: tiny}
workload: {concurrency: 2, requests: 8, prompt_tokens: 16, output_tokens: 8}
`)
	runs := t.TempDir()
	var dirs []string
	for _, shard := range []string{"0/2", "1/2"} {
		cio, _, stderr := testIO(nil)
		if code := execute(context.Background(), cio, []string{"run", "--output", "plain", "--runs", runs, "--shard", shard, path}); code != exitOK {
			t.Fatalf("run --shard %s: exit %d\n%s", shard, code, stderr.String())
		}
	}
	dirs, _ = filepath.Glob(filepath.Join(runs, "*"))
	if len(dirs) != 2 {
		t.Fatalf("%d run directories, want 2", len(dirs))
	}
	ran := files(t, dirs[0])
	for _, f := range finalizedFiles {
		if !slices.Contains(ran, f) {
			t.Errorf("run wrote no %s (it wrote %v)", f, ran)
		}
	}

	// report: remove what finalizing wrote; report must write it all again,
	// and nothing more.
	for _, f := range finalizedFiles {
		if err := os.Remove(filepath.Join(dirs[0], f)); err != nil {
			t.Fatal(err)
		}
	}
	cio, _, stderr := testIO(nil)
	if code := execute(context.Background(), cio, []string{"report", dirs[0]}); code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, stderr.String())
	}
	if got := files(t, dirs[0]); !slices.Equal(got, ran) {
		t.Errorf("after report the run directory holds %v, want what the run left: %v", got, ran)
	}

	out := filepath.Join(t.TempDir(), "merged")
	cio, _, stderr = testIO(nil)
	if code := execute(context.Background(), cio, append([]string{"merge", out}, dirs...)); code != exitOK {
		t.Fatalf("merge: exit %d\n%s", code, stderr.String())
	}
	merged := files(t, out)
	for _, f := range finalizedFiles {
		if !slices.Contains(merged, f) {
			t.Errorf("merge wrote no %s (it wrote %v)", f, merged)
		}
	}
}

// files lists the names in dir, sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}
