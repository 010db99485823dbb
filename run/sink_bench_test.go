package run

import (
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

// discard is a sink that keeps nothing: what is measured is the fan-out.
type discard struct{}

func (discard) Record(client.Record) error { return nil }
func (discard) Row(scrape.Row) error       { return nil }
func (discard) Close() error               { return nil }

// BenchmarkFanOut is what the sink seam costs per finished request behind
// the sender: the channel, the consumer's redaction, and three sinks. It
// must stay allocation-free.
func BenchmarkFanOut(b *testing.B) {
	o := newOutputs(discard{}, discard{}, discard{})
	o.start()
	rec := client.Record{ID: "req-000001", Phase: "main", Intended: time.Millisecond, Sent: 2 * time.Millisecond,
		FirstToken: 30 * time.Millisecond, End: 90 * time.Millisecond, PromptTokens: 128, OutputTokens: 64, Status: 200}
	b.ReportAllocs()
	for b.Loop() {
		o.records <- rec
	}
	if err := o.close(); err != nil {
		b.Fatal(err)
	}
}
