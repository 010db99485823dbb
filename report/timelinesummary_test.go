package report

import (
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/report/timeline"
)

// TestSlowestOf: 150 requests, the two slowest by TTFT (1 %, rounded up)
// spent 80 % of it queued; the faster ones, mostly in prefill, do not count.
func TestSlowestOf(t *testing.T) {
	var ps []timeline.Parts
	for i := range 148 {
		ps = append(ps, timeline.Parts{ID: "fast", Prefill: 90 * time.Millisecond, Queue: time.Duration(i) * 10 * time.Microsecond, TTFT: 100 * time.Millisecond})
	}
	ps = append(ps,
		timeline.Parts{ID: "slow1", Send: 10 * time.Millisecond, Queue: 800 * time.Millisecond, Prefill: 190 * time.Millisecond, TTFT: time.Second},
		timeline.Parts{ID: "slow2", Send: 20 * time.Millisecond, Queue: 1600 * time.Millisecond, Prefill: 380 * time.Millisecond, TTFT: 2 * time.Second})
	s := slowestOf(ps)
	if s.N != 2 || s.MinTTFT != 1 || s.Dominant != "queue" || s.Share["queue"] < 0.7999 || s.Share["queue"] > 0.8001 || s.Share["send"] < 0.0099 || s.Share["send"] > 0.0101 {
		t.Fatalf("%+v", s)
	}
	if want := "the slowest 1% (2 requests, TTFT ≥ 1 s) spent 80% of their TTFT queued"; s.Verdict != want {
		t.Errorf("verdict %q, want %q", s.Verdict, want)
	}
	if slowestOf(nil) != nil {
		t.Error("no requests, yet a slowest share")
	}
	if !strings.Contains(slowestOf(ps[:1]).Verdict, "(1 request,") {
		t.Error("one request is not one request")
	}
}

// TestTimelineFinding: a join under 99.9 % is a warning that says why,
// requests and spans apart.
func TestTimelineFinding(t *testing.T) {
	if _, ok := timelineFinding(nil); ok {
		t.Error("a finding without spans")
	}
	st := &ServerTimeline{Records: 1000, Joined: 998, JoinRate: 0.998, Spans: 1001,
		RecordsUnjoined: []timeline.Count{{Reason: timeline.RecordNoSpan, N: 2}},
		SpansUnjoined:   []timeline.Count{{Reason: timeline.SpanForeign, N: 3}}}
	f, ok := timelineFinding(st)
	if !ok || f.Severity != "warn" || !strings.Contains(f.Verdict, "998 of 1000 requests joined") ||
		!strings.Contains(f.Verdict, "2: "+timeline.RecordNoSpan) || !strings.Contains(f.Verdict, "3: "+timeline.SpanForeign) {
		t.Errorf("%+v", f)
	}
	st.Joined, st.JoinRate, st.RecordsUnjoined = 999, 0.999, nil
	if f, _ := timelineFinding(st); f.Severity != "info" {
		t.Errorf("99.9 %% joined: %+v", f)
	}
}
