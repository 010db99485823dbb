package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/llmbench-org/llmbench/client"
	reportparquet "github.com/llmbench-org/llmbench/report/parquet"
	"github.com/llmbench-org/llmbench/rundir"
)

// TestReportParquet runs the built-in engine, then `report --format parquet`
// with and without --chunks: the run's requests.jsonl is in record format v2,
// and the Parquet files hold a row per request and per chunk.
func TestReportParquet(t *testing.T) {
	t.Parallel()
	runs := t.TempDir()
	path := writeScenario(t, "name: pq\nengine: {kind: sim, preset: tiny}\nworkload: {concurrency: 2, requests: 10, prompt_tokens: 16, output_tokens: 12}\n")
	cio, _, stderr := testIO(nil)
	if code := execute(context.Background(), cio, []string{"run", "--output", "plain", "--runs", runs, path}); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, stderr.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "*-pq"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	dir := dirs[0]
	raw, err := os.ReadFile(filepath.Join(dir, rundir.RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
	chunks := 0
	for _, l := range lines {
		if !bytes.HasPrefix(l, []byte(`{"v":2,`)) || !bytes.Contains(l, []byte(`"chunk_dt_ns":[`)) {
			t.Fatalf("requests.jsonl line not in v2: %s", l)
		}
		var r client.Record
		if err := client.DecodeRecord(l, &r); err != nil {
			t.Fatal(err)
		}
		chunks += len(r.Chunks)
	}

	for _, withChunks := range []bool{false, true} {
		args := []string{"report", "--format", "parquet", dir}
		want := []string{filepath.Join(dir, reportparquet.RequestsFile)}
		if withChunks {
			args = append(args[:1], append([]string{"--chunks"}, args[1:]...)...)
			want = append(want, filepath.Join(dir, reportparquet.ChunksFile))
		}
		cio, stdout, stderr := testIO(nil)
		if code := execute(context.Background(), cio, args); code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr.String())
		}
		if got := strings.Fields(stdout.String()); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("%v printed %q, want %q", args, got, want)
		}
	}
	for name, rows := range map[string]int{reportparquet.RequestsFile: len(lines), reportparquet.ChunksFile: chunks} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		file, err := pq.OpenFile(f, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		if file.NumRows() != int64(rows) || rows == 0 {
			t.Errorf("%s: %d rows, want %d", name, file.NumRows(), rows)
		}
		f.Close()
	}

	cio2, _, stderr2 := testIO(nil)
	if code := execute(context.Background(), cio2, []string{"report", "--format", "arrow", dir}); code != exitUsage || !strings.Contains(stderr2.String(), "parquet") {
		t.Errorf("--format arrow: exit %d, want %d; %s", code, exitUsage, stderr2.String())
	}
}
