package rundir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

func TestNewNeverReusesADirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "runs", "20260101T000000Z-x")
	seen := map[string]bool{}
	for range 3 {
		w, err := New(dir)
		if err != nil {
			t.Fatal(err)
		}
		if seen[w.Dir()] {
			t.Fatalf("run directory %s handed out twice", w.Dir())
		}
		seen[w.Dir()] = true
		w.Close()
	}
	if !seen[dir] || !seen[dir+"-2"] || !seen[dir+"-3"] {
		t.Errorf("directories %v, want %s, -2 and -3", seen, dir)
	}
}

// A record's line costs no allocation of its own: at hundreds of requests a
// second, a fresh buffer per line is garbage the run's quiet collector
// (docs/decisions/0004) would have to hold.
func TestRecordLineAllocatesNothing(t *testing.T) {
	w, err := New(filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rec := client.Record{ID: "r-1", Phase: "main", Sent: time.Millisecond, FirstToken: 3 * time.Millisecond,
		End: 9 * time.Millisecond, OutputTokens: 40}
	for i := range 40 {
		rec.Chunks = append(rec.Chunks, client.Chunk{At: time.Duration(i) * time.Millisecond, Tokens: 1})
	}
	if err := w.Record(rec); err != nil { // the buffer grows once
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = w.Record(rec) }); n != 0 {
		t.Errorf("%v allocations per line, want 0", n)
	}
}

// What the writer appends reads back whole and redacted, records and rows
// alike; WriteJSON writes a RunMeta redacted and leaves the caller's as it
// was.
func TestWriterAppendsRedactedLines(t *testing.T) {
	t.Parallel()
	w, err := New(filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	recs := []client.Record{{ID: "a", Index: 0, Error: "status 401: Bearer sk-abcdefghijkl"}, {ID: "b", Index: 1}}
	for _, r := range recs {
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Row(scrape.Row{Target: "http://u:pw@e/metrics", Error: "refused"}); err != nil {
		t.Fatal(err)
	}
	meta := RunMeta{ID: "x", Engine: EngineMeta{BaseURL: "http://u:pw@e/v1"}}
	if err := w.WriteJSON(RunFile, meta); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got []client.Record
	if _, err := ReadJSONL(filepath.Join(w.Dir(), RequestsFile), func(r *client.Record) error { got = append(got, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Error != "status 401: Bearer REDACTED" || got[1].ID != "b" {
		t.Errorf("records read back: %+v", got)
	}
	rows, _, err := ReadRows(w.Dir())
	if err != nil || len(rows) != 1 || rows[0].Target != "http://u:REDACTED@e/metrics" {
		t.Errorf("rows read back: %+v, %v", rows, err)
	}
	b, err := os.ReadFile(filepath.Join(w.Dir(), RunFile))
	if err != nil {
		t.Fatal(err)
	}
	var back RunMeta
	if err := json.Unmarshal(b, &back); err != nil || back.Engine.BaseURL != "http://u:REDACTED@e/v1" {
		t.Errorf("run.json: %s (%v)", b, err)
	}
	if meta.Engine.BaseURL != "http://u:pw@e/v1" {
		t.Errorf("WriteJSON changed the caller's meta: %s", meta.Engine.BaseURL)
	}
	if strings.Contains(string(b), "pw") {
		t.Errorf("run.json holds the password: %s", b)
	}
}

// Writer is one of the run's sinks (run.Sink): records and rows arrive one
// at a time on the run's consumer goroutine.
var _ interface {
	Record(client.Record) error
	Row(scrape.Row) error
	Close() error
} = (*Writer)(nil)
