package run

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/live"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// Every record and row reaches both sinks: the run directory's files and
// the live window.
func TestConsumeFeedsEverySink(t *testing.T) {
	t.Parallel()
	out, err := rundir.New(filepath.Join(t.TempDir(), "run"))
	if err != nil {
		t.Fatal(err)
	}
	view := live.NewWindow(time.Now())
	records, rows := make(chan client.Record, 3), make(chan scrape.Row, 1)
	for i := range 3 {
		records <- client.Record{ID: string(rune('a' + i)), Index: i, End: time.Millisecond}
	}
	rows <- scrape.Row{Error: "refused"}
	close(records)
	close(rows)
	if err := consume(records, rows, out, view); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	n := 0
	if _, err := rundir.ReadJSONL(filepath.Join(out.Dir(), rundir.RequestsFile), func(*client.Record) error { n++; return nil }); err != nil || n != 3 {
		t.Errorf("requests.jsonl: %d records, %v; want 3", n, err)
	}
	got, _, err := rundir.ReadRows(out.Dir())
	if err != nil || len(got) != 1 {
		t.Errorf("scrapes.jsonl: %d rows, %v; want 1", len(got), err)
	}
	if p := view.Progress(); p.Finished != 3 || p.ScrapeFailures != 1 {
		t.Errorf("live window: %d finished, %d failed scrapes; want 3, 1", p.Finished, p.ScrapeFailures)
	}
}

// BenchmarkConsume is the per-record path after the client: one record
// (40 chunks) to the run directory's writer and the live window, through
// the channel the sender fills. Compare with the Recorder before 0019:
//
//	go test ./run -run '^$' -bench Consume -benchmem
func BenchmarkConsume(b *testing.B) {
	out, err := rundir.New(filepath.Join(b.TempDir(), "run"))
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	view := live.NewWindow(time.Now())
	rec := client.Record{ID: "r-1", Phase: "main", Sent: time.Millisecond, FirstToken: 3 * time.Millisecond,
		End: 9 * time.Millisecond, OutputTokens: 40, FinishReason: "stop"}
	for i := range 40 {
		rec.Chunks = append(rec.Chunks, client.Chunk{At: 3*time.Millisecond + time.Duration(i)*100*time.Microsecond, Tokens: 1})
	}
	records, rows := make(chan client.Record, 1024), make(chan scrape.Row)
	close(rows)
	b.ReportAllocs()
	go func() {
		for range b.N {
			records <- rec
		}
		close(records)
	}()
	if err := consume(records, rows, out, view); err != nil {
		b.Fatal(err)
	}
}
