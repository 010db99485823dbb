package html

import (
	"io"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/internal/quiet"
)

// bigRun is about 100,000 requests over a run of more than ten minutes,
// their latencies scattered over three decades so that the scatter charts
// cannot merge many dots: the size a page must survive.
var bigRun = synth{seed: 11, rateScale: 13, stretch: 15, chunks: 8, failEvery: 97, spread: 1.2, service: 40}

// maxPageBytes bounds the page of a 100,000-request run.
const maxPageBytes = 3 << 20

func TestSizeBound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100,000-request run")
	}
	t.Parallel()
	quiet.Busy(t) // loads the machine: a timing-sensitive test elsewhere waits for it
	in := bigRun.input()
	if n := len(in.Records); n < 100_000 {
		t.Fatalf("the run has %d requests, want at least 100,000", n)
	}
	doc := renderString(t, in)
	t.Logf("%d requests, %d scrapes: %d bytes", len(in.Records), len(in.Rows), len(doc))
	if len(doc) > maxPageBytes {
		t.Errorf("report.html is %d bytes, want at most %d", len(doc), maxPageBytes)
	}
	if err := wellFormed(doc); err != nil {
		t.Fatalf("not well-formed: %v", err)
	}
	// The page says what it reduced.
	for _, want := range []string{"TTFT scatter: ", "E2E scatter: ", "buckets of the run clock, not per second", "The run clock reads m:ss"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
}

func BenchmarkRender100k(b *testing.B) {
	in := bigRun.input()
	b.ReportAllocs()
	var size int
	for b.Loop() {
		var w countingWriter
		if err := Render(&w, in); err != nil {
			b.Fatal(err)
		}
		size = w.n
	}
	b.ReportMetric(float64(size), "bytes/page")
}

type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

var _ io.Writer = (*countingWriter)(nil)
