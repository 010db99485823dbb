package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/realtest"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// A disk that fills up while `llmbench report` rewrites a run directory's
// reports leaves the previous ones whole: summary.json still parses (a CI
// baseline kept as its summary alone is not lost), and no temporary file
// is left behind. The disk is a real one that runs out of space: a small
// tmpfs, filled before the second Finalize, whose summary is larger (the
// run's phases were split since), so that truncating the old file in place
// would not free room enough for the new one.
func TestFullDiskDuringReportKeepsTheSummary(t *testing.T) {
	disk := realtest.TinyDisk(t, 4<<20)
	w, err := rundir.New(filepath.Join(disk, "run"))
	if err != nil {
		t.Fatal(err)
	}
	dir := w.Dir()
	const n = 200
	for i := range n {
		rec := client.Record{ID: fmt.Sprintf("r-%d", i), Index: i, Phase: fmt.Sprintf("p%d", i*6/n), Sent: time.Duration(i) * time.Millisecond,
			FirstToken: time.Duration(i)*time.Millisecond + 20*time.Millisecond, End: time.Duration(i)*time.Millisecond + 90*time.Millisecond,
			PromptTokens: 32, OutputTokens: 8, FinishReason: "stop"}
		for c := range 8 {
			rec.Chunks = append(rec.Chunks, client.Chunk{At: rec.FirstToken + time.Duration(c)*5*time.Millisecond, Tokens: 1})
		}
		if err := w.Record(rec); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	meta := rundir.RunMeta{ID: "run", Scenario: "fulldisk", StartedAt: start, Ended: start.Add(time.Second),
		Engine: rundir.EngineMeta{Kind: "external", BaseURL: "http://127.0.0.1:1/v1", Model: "m"},
		Phases: []rundir.PhaseMeta{{Name: "all", Measured: true, End: time.Second}}}
	if err := w.WriteJSON(rundir.RunFile, meta); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Finalize(dir, nil); err != nil {
		t.Fatalf("first report, with room: %v", err)
	}
	before, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}

	// The same records as six phases now: a longer summary.
	meta.Phases = nil
	for p := range 6 {
		meta.Phases = append(meta.Phases, rundir.PhaseMeta{Name: fmt.Sprintf("p%d", p), Measured: true,
			Start: time.Duration(p) * time.Second / 6, End: time.Duration(p+1) * time.Second / 6})
	}
	if err := rundir.WriteJSON(filepath.Join(dir, rundir.RunFile), meta); err != nil {
		t.Fatal(err)
	}
	fillDisk(t, disk)
	_, err = Finalize(dir, nil)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("report on a full disk: %v, want ENOSPC", err)
	}
	after, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var s report.Summary
	if err := json.Unmarshal(after, &s); err != nil {
		t.Fatalf("summary.json after a full disk does not parse: %v\n%s", err, after)
	}
	if !bytes.Equal(before, after) || s.Health.Records != n {
		t.Errorf("summary.json changed: %d bytes, was %d (%d records)", len(after), len(before), s.Health.Records)
	}
	for _, name := range []string{rundir.MarkdownFile, rundir.HTMLFile} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s after a full disk: %v", name, err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// fillDisk writes a file on dir's file system until it is full.
func fillDisk(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			break
		}
	}
	for _, size := range []int{4096, 512, 1} { // the last pages too
		for {
			if _, err := f.Write(block[:size]); err != nil {
				break
			}
		}
	}
}
