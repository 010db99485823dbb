package gates

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// writeRunDir writes a run directory's raw files: a warmup phase (not
// measured) and the main phase.
func writeRunDir(t *testing.T, recs []client.Record) string {
	t.Helper()
	dir := t.TempDir()
	warm := client.Record{ID: "w", Index: len(recs), Phase: "warmup", Sent: time.Millisecond, Wrote: time.Millisecond,
		FirstToken: 9 * time.Second, End: 10 * time.Second, OutputTokens: 1, TokenSource: client.TokensFromUsage}
	meta := rundir.RunMeta{ID: "dir-run", Scenario: "world", Phases: []rundir.PhaseMeta{
		{Name: "warmup", Start: 0, End: time.Second},
		{Name: "main", Measured: true, Start: time.Second, End: recs[len(recs)-1].End},
	}}
	b, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.RunFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var lines bytes.Buffer
	enc := json.NewEncoder(&lines)
	// Written in finishing order, not plan order, as the recorder does.
	for _, r := range append([]client.Record{warm}, recs[len(recs)/2:]...) {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range recs[:len(recs)/2] {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.RequestsFile), lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoadRun(t *testing.T) {
	t.Parallel()
	want := baseWorld.run(t)
	dir := writeRunDir(t, want.Records)

	got, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "dir-run" || len(got.Records) != len(want.Records) {
		t.Fatalf("run %q with %d records, want dir-run with the %d measured ones", got.ID, len(got.Records), len(want.Records))
	}
	for i, r := range got.Records {
		if r.Index != i || r.Phase != "main" {
			t.Fatalf("record %d: index %d phase %q: want the measured records in plan order", i, r.Index, r.Phase)
		}
	}
	if d := cmp.Diff(want.Summary.Client, got.Summary.Client); d != "" {
		t.Errorf("client view differs from report.Compute's (-want +got):\n%s", d)
	}

	// A summary.json alone, as a file or in a directory: no records.
	var buf bytes.Buffer
	if err := report.RenderJSON(&buf, got.Summary); err != nil {
		t.Fatal(err)
	}
	only := t.TempDir()
	if err := os.WriteFile(filepath.Join(only, rundir.SummaryFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{only, filepath.Join(only, rundir.SummaryFile)} {
		s, err := LoadRun(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if s.Records != nil || s.ID != "dir-run" || !reflect.DeepEqual(s.Summary.Client.Latency.TTFT, got.Summary.Client.Latency.TTFT) {
			t.Errorf("%s: id %q, %d records, ttft %+v", p, s.ID, len(s.Records), s.Summary.Client.Latency.TTFT)
		}
	}

	for _, tt := range []struct{ path, want string }{
		{t.TempDir(), "holds neither"},
		{filepath.Join(t.TempDir(), "missing"), "no such file"},
		{filepath.Join(dir, rundir.RunFile), "schema"},
	} {
		if _, err := LoadRun(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("LoadRun(%s) = %v, want an error containing %q", tt.path, err, tt.want)
		}
	}
}
