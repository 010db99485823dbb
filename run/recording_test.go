package run

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// Every record and row reaches both of the run's own sinks: the run
// directory's files and the live window, which also counts what is in
// flight as the observer of every request.
func TestRecordingFeedsBothSinks(t *testing.T) {
	t.Parallel()
	rd, err := createRecording(filepath.Join(t.TempDir(), "run"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	outs := newOutputs()
	rd.addTo(outs)
	outs.start()
	for i := range 3 {
		outs.Begin()
		outs.End()
		outs.records <- client.Record{ID: string(rune('a' + i)), Index: i, End: time.Millisecond}
	}
	outs.rows <- scrape.Row{Error: "refused"}
	if err := outs.close(); err != nil {
		t.Fatal(err)
	}
	n := 0
	if _, err := rundir.ReadJSONL(filepath.Join(rd.Dir(), rundir.RequestsFile), func(*client.Record) error { n++; return nil }); err != nil || n != 3 {
		t.Errorf("requests.jsonl: %d records, %v; want 3", n, err)
	}
	got, _, err := rundir.ReadRows(rd.Dir())
	if err != nil || len(got) != 1 {
		t.Errorf("scrapes.jsonl: %d rows, %v; want 1", len(got), err)
	}
	if p := rd.Progress(); p.Finished != 3 || p.ScrapeFailures != 1 || p.InFlight != 0 {
		t.Errorf("live window: %d finished, %d failed scrapes, %d in flight; want 3, 1, 0", p.Finished, p.ScrapeFailures, p.InFlight)
	}
}

// BenchmarkRecording is the per-record path after the client: one record
// (40 chunks) through the channel the sender fills to the run directory's
// writer and the live window, as a run wires them (0019, 0028):
//
//	go test ./run -run '^$' -bench Recording -benchmem
func BenchmarkRecording(b *testing.B) {
	rd, err := createRecording(filepath.Join(b.TempDir(), "run"), time.Now())
	if err != nil {
		b.Fatal(err)
	}
	outs := newOutputs()
	rd.addTo(outs)
	outs.start()
	rec := client.Record{ID: "r-1", Phase: "main", Sent: time.Millisecond, FirstToken: 3 * time.Millisecond,
		End: 9 * time.Millisecond, OutputTokens: 40, FinishReason: "stop"}
	for i := range 40 {
		rec.Chunks = append(rec.Chunks, client.Chunk{At: 3*time.Millisecond + time.Duration(i)*100*time.Microsecond, Tokens: 1})
	}
	b.ReportAllocs()
	for range b.N {
		outs.records <- rec
	}
	if err := outs.close(); err != nil {
		b.Fatal(err)
	}
}
