package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// TestLiveGoodput: with an SLO the live window counts the requests within it
// over the window, and the plain progress line says so; without one it
// says nothing of goodput.
func TestLiveGoodput(t *testing.T) {
	ms := time.Millisecond
	failed := rec(10*ms, 50*ms, 4)
	failed.ErrorClass = client.ErrTimeout
	records := []client.Record{rec(10*ms, 50*ms, 4), rec(10*ms, 60*ms, 4), rec(400*ms, 450*ms, 4), failed}

	w := newLiveWindow(10 * time.Second)
	w.slo = &SLO{TTFT: 100 * ms}
	plain := newLiveWindow(10 * time.Second)
	for i := range records {
		w.addRecord(&records[i], 5*time.Second)
		plain.addRecord(&records[i], 5*time.Second)
	}
	p := w.progress(10 * time.Second)
	if !p.HasGoodput || p.GoodputPerSec != 0.2 || p.GoodFraction != 0.5 {
		t.Errorf("goodput %v/s, fraction %v (has %v): want 2 of 4 requests over a 10 s window", p.GoodputPerSec, p.GoodFraction, p.HasGoodput)
	}
	if line := ProgressLine(p); !strings.Contains(line, "goodput 0.2 req/s (50%)") {
		t.Errorf("progress line lacks the goodput: %s", line)
	}
	if q := plain.progress(10 * time.Second); q.HasGoodput || strings.Contains(ProgressLine(q), "goodput") {
		t.Errorf("a run without an slo reports goodput: %+v", q)
	}
}

// The live window reads the scenario's percentiles, as the final report
// does, and the plain line names the first and the last.
func TestLivePercentiles(t *testing.T) {
	w := newLiveWindow(10 * time.Second)
	w.percentiles = []float64{50, 95, 99.9}
	for i := range 1000 {
		w.addRecord(&client.Record{ID: fmt.Sprint(i), Sent: time.Second, FirstToken: time.Second + time.Duration(i+1)*time.Millisecond,
			End: 2 * time.Second, Chunks: []client.Chunk{{At: time.Second + time.Duration(i+1)*time.Millisecond}}}, 3*time.Second)
	}
	p := w.progress(3 * time.Second)
	want := []time.Duration{500 * time.Millisecond, 950 * time.Millisecond, 999 * time.Millisecond}
	if len(p.TTFT.Values) != 3 || p.TTFT.N != 1000 || !slices.Equal(p.TTFT.Values, want) {
		t.Fatalf("TTFT %+v, want %v at %v", p.TTFT, want, p.Percentiles)
	}
	if line := ProgressLine(p); !strings.Contains(line, "TTFT p50 500.0ms p99.9 999.0ms") {
		t.Errorf("plain line %q", line)
	}
}
