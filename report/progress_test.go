package report

import (
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
