package html

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// writeRun lays a synthetic run out as llmbench writes it.
func writeRun(t *testing.T, s synth, withScrapes bool) string {
	t.Helper()
	dir := t.TempDir()
	meta, records, rows, _ := s.run()
	write := func(name string, lines ...any) {
		var b strings.Builder
		for _, l := range lines {
			j, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(j)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(rundir.RunFile, meta)
	reqs := make([]any, len(records))
	for i := range records {
		reqs[i] = records[i]
	}
	write(rundir.RequestsFile, reqs...)
	if withScrapes {
		scr := make([]any, len(rows))
		for i := range rows {
			scr[i] = rows[i]
		}
		write(rundir.ScrapesFile, scr...)
	}
	return dir
}

func TestLoad(t *testing.T) {
	t.Parallel()
	run := synth{seed: 4, rateScale: 0.5, stretch: 1, chunks: 4, failEvery: 9}
	t.Run("a run directory", func(t *testing.T) {
		t.Parallel()
		dir := writeRun(t, run, true)
		in, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		want, err := report.Build(dir)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, in.Summary, cmpopts.EquateNaNs()); diff != "" {
			t.Errorf("Summary differs from report.Build (-want +got):\n%s", diff)
		}
		_, records, rows, _ := run.run()
		if len(in.Records) != len(records) || len(in.Rows) != len(rows) {
			t.Errorf("loaded %d records and %d rows, want %d and %d", len(in.Records), len(in.Rows), len(records), len(rows))
		}
		if err := wellFormed(renderString(t, in)); err != nil {
			t.Error(err)
		}
	})
	t.Run("the raw files beside a built summary, written to the run", func(t *testing.T) {
		t.Parallel()
		dir := writeRun(t, run, true)
		s, err := report.Build(dir)
		if err != nil {
			t.Fatal(err)
		}
		in, err := LoadRaw(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		path, err := WriteFile(dir, in)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if path != filepath.Join(dir, FileName) || string(b) != renderString(t, in) {
			t.Errorf("WriteFile wrote %s, not the rendered page at %s", path, filepath.Join(dir, FileName))
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("temporary file %s left behind", e.Name())
			}
		}
		if _, err := WriteFile(filepath.Join(dir, "missing"), in); err == nil {
			t.Error("WriteFile into a missing directory succeeded")
		}
	})
	t.Run("no scrapes.jsonl", func(t *testing.T) {
		t.Parallel()
		in, err := Load(writeRun(t, run, false))
		if err != nil {
			t.Fatal(err)
		}
		if len(in.Rows) != 0 || len(in.Records) == 0 {
			t.Errorf("%d rows and %d records, want none and some", len(in.Rows), len(in.Records))
		}
	})
	t.Run("not a run directory", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("err = %v, want one naming %s", err, dir)
		}
	})
	t.Run("a damaged requests.jsonl", func(t *testing.T) {
		t.Parallel()
		dir := writeRun(t, run, true)
		path := filepath.Join(dir, rundir.RequestsFile)
		b, _ := os.ReadFile(path)
		if err := os.WriteFile(path, append([]byte("{not json\n"), b...), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), rundir.RequestsFile) {
			t.Errorf("err = %v, want one naming %s", err, rundir.RequestsFile)
		}
	})
}
