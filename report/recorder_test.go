package report

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

func TestNewRecorderNeverReusesADirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "runs", "20260101T000000Z-x")
	seen := map[string]bool{}
	for range 3 {
		r, err := NewRecorder(dir, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if seen[r.Dir()] {
			t.Fatalf("run directory %s handed out twice", r.Dir())
		}
		seen[r.Dir()] = true
		r.Close()
	}
	if !seen[dir] || !seen[dir+"-2"] || !seen[dir+"-3"] {
		t.Errorf("directories %v, want %s, -2 and -3", seen, dir)
	}
}

// A record's line costs no allocation of its own: at hundreds of requests a
// second, a fresh buffer per line is garbage the run's quiet collector
// (docs/decisions/0004) would have to hold.
func TestRecorderLineAllocatesNothing(t *testing.T) {
	r, err := NewRecorder(filepath.Join(t.TempDir(), "run"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rec := client.Record{ID: "r-1", Phase: "main", Sent: time.Millisecond, FirstToken: 3 * time.Millisecond,
		End: 9 * time.Millisecond, OutputTokens: 40}
	for i := range 40 {
		rec.Chunks = append(rec.Chunks, client.Chunk{At: time.Duration(i) * time.Millisecond, Tokens: 1})
	}
	if err := r.appendLine(r.requests, &rec); err != nil { // the buffer grows once
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = r.appendLine(r.requests, &rec) }); n != 0 {
		t.Errorf("%v allocations per line, want 0", n)
	}
}
