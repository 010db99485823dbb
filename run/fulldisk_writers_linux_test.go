package run

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/llmbench-org/llmbench/internal/realtest"
	"github.com/llmbench-org/llmbench/internal/testkit"
	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/report/noise"
	reportparquet "github.com/llmbench-org/llmbench/report/parquet"
	"github.com/llmbench-org/llmbench/rundir"
)

// Every file llmbench rewrites beside the reports (those are
// TestFullDiskDuringReportKeepsTheSummary's) keeps its old content whole
// when the disk fills up while it is rewritten: run.json, a trial set's
// trials.json, a noise file (`llmbench noise`), a JUnit report (`gate
// --junit`), requests.parquet (`report --format parquet`). Each writer is
// run once with room, the disk is filled, and it is run again with more to
// write: it fails with ENOSPC, the old file is byte for byte what it was,
// and no temporary file is left beside it.
func TestFullDiskKeepsEveryRewrittenFile(t *testing.T) {
	disk := realtest.TinyDisk(t, 8<<20)
	run := filepath.Join(disk, "run")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	src := testkit.CopyDir(t, "../report/testdata/v1-run")
	for _, name := range []string{rundir.RunFile, rundir.RequestsFile, rundir.ScrapesFile, rundir.ScenarioFile} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(run, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meta, err := rundir.ReadMeta(run)
	if err != nil {
		t.Fatal(err)
	}
	noisePath := filepath.Join(disk, "noise.json")
	junitPath := filepath.Join(disk, "junit.xml")
	// writers[i](more) rewrites one file; more makes it longer than the
	// first time, so truncating the old file in place would not free room
	// enough for the new one.
	writers := []struct {
		path  string
		write func(more bool) error
	}{
		{filepath.Join(run, rundir.RunFile), func(more bool) error {
			m := meta
			if more {
				m.Scenario = strings.Repeat("s", 64<<10)
			}
			return rundir.WriteJSON(filepath.Join(run, rundir.RunFile), m)
		}},
		{filepath.Join(disk, rundir.TrialsFile), func(more bool) error {
			trials := []string{"run"}
			if more {
				for range 2000 {
					trials = append(trials, "run")
				}
			}
			return rundir.WriteTrials(disk, trials)
		}},
		{noisePath, func(more bool) error {
			var f noise.File
			n := 1
			if more {
				n = 500
			}
			for i := range n {
				f.Put(noise.Entry{Key: noise.Key{Scenario: "s", ScenarioHash: strings.Repeat("h", i+1), Host: "m"}, Pairs: 3,
					Metrics: map[string]noise.Metric{"client.ttft.p99": {Floor: 0.1, Regressions: []float64{0.1, -0.05}}}})
			}
			return f.Save(noisePath)
		}},
		{junitPath, func(more bool) error {
			r := gates.Result{Gate: "client.ttft.p99 < 500ms", Metric: "client.ttft.p99", Unit: "s", Value: 0.2, Observed: 0.2, Limit: 0.5}
			rep := gates.Report{Run: "run", Scenario: "s", Results: []gates.Result{r}}
			if more {
				for range 3000 {
					rep.Results = append(rep.Results, r)
				}
			}
			err := printGates(rep, &bytes.Buffer{}, junitPath)
			var gf *GatesFailed
			if errors.As(err, &gf) {
				return nil // the verdict, not the write
			}
			return err
		}},
		{filepath.Join(run, "requests.parquet"), func(more bool) error {
			_, err := reportparquet.Write(run, reportparquet.Options{Chunks: more})
			return err
		}},
	}
	before := make([][]byte, len(writers))
	for i, w := range writers {
		if err := w.write(false); err != nil {
			t.Fatalf("%s, with room: %v", filepath.Base(w.path), err)
		}
		if before[i], err = os.ReadFile(w.path); err != nil {
			t.Fatal(err)
		}
	}
	fillDisk(t, disk)
	for i, w := range writers {
		name := filepath.Base(w.path)
		if err := w.write(true); !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%s on a full disk: %v, want ENOSPC", name, err)
		}
		after, err := os.ReadFile(w.path)
		if err != nil || !bytes.Equal(after, before[i]) {
			t.Errorf("%s after a full disk: %d bytes, %v; was %d bytes", name, len(after), err, len(before[i]))
		}
	}
	for _, d := range []string{disk, run} {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp") {
				t.Errorf("temporary file %s left behind in %s", e.Name(), d)
			}
		}
	}
}
