package live

import (
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// TestLiveOutage: a request that could not reach the engine opens an
// outage the progress line names until a request sent after it reaches
// the engine.
func TestLiveOutage(t *testing.T) {
	ms := time.Millisecond
	w := NewWindow(time.Now().Add(-5 * time.Second))
	_ = w.Record(client.Record{ID: "a", Sent: 100 * ms, End: 200 * ms, Status: 200, FirstByte: 110 * ms})
	if p := w.Progress(); p.Outage.Open || strings.Contains(ProgressLine(p), "OUTAGE") {
		t.Fatalf("an outage before any failure: %+v", p.Outage)
	}
	for i, at := range []time.Duration{1000 * ms, 1050 * ms, 1200 * ms} {
		_ = w.Record(client.Record{ID: string(rune('b' + i)), Sent: at, End: at + ms, ErrorClass: client.ErrConnect})
	}
	p := w.Progress()
	if !p.Outage.Open || p.Outage.Since != time.Second || p.Outage.Attempts != 3 {
		t.Fatalf("outage %+v, want open since 1s with 3 attempts", p.Outage)
	}
	if line := ProgressLine(p); !strings.Contains(line, "OUTAGE: engine unreachable for") || !strings.Contains(line, "3 failed attempts") {
		t.Errorf("progress line %q: want the open outage named", line)
	}
	_ = w.Record(client.Record{ID: "z", Sent: 1400 * ms, End: 1500 * ms, Status: 200, FirstByte: 1410 * ms})
	if p := w.Progress(); p.Outage.Open || p.Outages != 1 || strings.Contains(ProgressLine(p), "OUTAGE") {
		t.Errorf("outage %+v (%d closed) after the engine answered: want it closed", p.Outage, p.Outages)
	}
}

// TestSilentLine: requests with no byte for a second or more are named on
// every progress line, and not before.
func TestSilentLine(t *testing.T) {
	w := NewWindow(time.Now())
	for _, tc := range []struct {
		n    int
		for_ time.Duration
		want string
	}{
		{0, 0, ""},
		{3, 500 * time.Millisecond, ""},
		{1, 1500 * time.Millisecond, "waiting on 1 request with no byte received for 2s"},
		{4, 65 * time.Second, "waiting on 4 requests with no byte received for 65s"},
	} {
		w.SetSilent(tc.n, tc.for_)
		line := ProgressLine(w.Progress())
		if tc.want == "" && strings.Contains(line, "waiting on") || tc.want != "" && !strings.Contains(line, tc.want) {
			t.Errorf("silent %d for %v: line %q, want %q", tc.n, tc.for_, line, tc.want)
		}
	}
}
