package live

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/rundir"
)

// TestLiveGoodput: with an SLO the live window counts the requests within it
// over the window, and the plain progress line says so; without one it
// says nothing of goodput.
func TestLiveGoodput(t *testing.T) {
	ms := time.Millisecond
	failed := rec(10*ms, 50*ms, 4)
	failed.ErrorClass = client.ErrTimeout
	records := []client.Record{rec(10*ms, 50*ms, 4), rec(10*ms, 60*ms, 4), rec(400*ms, 450*ms, 4), failed}

	w := newWindow(10 * time.Second)
	w.slo = &rundir.SLO{TTFT: 100 * ms}
	plain := newWindow(10 * time.Second)
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
	w := newWindow(10 * time.Second)
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

// The live view warns about the client only when two looks in a row agree,
// and says what follows for its latencies.
func TestLiveClientWarning(t *testing.T) {
	rec := NewWindow(time.Now())
	throttled := ClientLive{Delay: "cpu_throttled", CPUUtilization: 0.1, Cores: 2, ThrottledPeriods: 9, Throttled: 610 * time.Millisecond, CPUQuota: 0.2}
	for _, tc := range []struct {
		name  string
		looks []ClientLive
		want  string // in the plain line; "" for no warning
	}{
		{"fine", []ClientLive{{Cores: 2}, {Cores: 2}}, ""},
		{"one look is not a verdict", []ClientLive{{Cores: 2}, throttled}, ""},
		{"two looks agree", []ClientLive{throttled, throttled}, "WARN client: its container's CPU limit (0.2 cores) stopped it 9 times (610 ms) in the last second"},
		{"cpu-bound", []ClientLive{{Delay: "cpu_bound", CPUUtilization: 0.97, Cores: 2}, {Delay: "cpu_bound", CPUUtilization: 0.95, Cores: 2}}, "WARN client: CPU-bound (95% of 2 cores)"},
		{"others took the cores", []ClientLive{{Delay: "host_delayed", HostMeasured: true, HostOtherCPU: 0.9}, {Delay: "host_delayed", HostMeasured: true, HostOtherCPU: 0.8}}, "WARN client: other processes took its cores (80% of the machine)"},
		{"recovered", []ClientLive{throttled, {Cores: 2}}, ""},
	} {
		for _, c := range tc.looks {
			rec.SetClient(c)
		}
		line := ProgressLine(rec.Progress())
		if tc.want == "" && strings.Contains(line, "WARN client") || tc.want != "" && !strings.Contains(line, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, line, tc.want)
		}
	}
}

// TestLiveRealEngines: the live window's ITL is each request's mean ITL, TTFC shows when
// reasoning came first, and stream:false requests are counted and left out
// of the goodput fraction.
func TestLiveRealEngines(t *testing.T) {
	reasoning := streamed(10*msec, 30*msec, 4, 3) // three gaps of 30 ms over nine tokens
	reasoning.FirstContent = 100 * msec
	noDone := streamed(10*msec, 10*msec, 4, 1)
	noDone.NoDone = true
	noStream := client.Record{NoStream: true, End: 50 * msec, OutputTokens: 3}

	w := newWindow(10 * time.Second)
	w.slo = &rundir.SLO{TTFT: 50 * msec}
	for _, r := range []client.Record{reasoning, noDone, noStream} {
		w.addRecord(&r, time.Second)
	}
	p := w.progress(2 * time.Second)
	if p.ITLMean.N != 2 || p.ITLMean.Values[2] != 10*msec {
		t.Errorf("itl %+v: want per-request means of 10 ms", p.ITLMean)
	}
	if !p.TTFCDiffers || p.TTFC.Values[2] != 100*msec {
		t.Errorf("ttfc %+v (differs %v)", p.TTFC, p.TTFCDiffers)
	}
	if p.NotStreamed != 1 || p.StreamsWithoutDone != 1 || p.Unmeasured != 1 || p.GoodFraction != 1 {
		t.Errorf("not streamed %d, without done %d, unmeasured %d, good fraction %v", p.NotStreamed, p.StreamsWithoutDone, p.Unmeasured, p.GoodFraction)
	}
	line := ProgressLine(p)
	for _, want := range []string{"(100%, 1 unmeasured)", "1 not streamed", "1 streams without [DONE]", "TTFC p50"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line lacks %q: %s", want, line)
		}
	}
}

// A live warning is printed only once it held in two consecutive looks.
func TestLiveWarningsMustHold(t *testing.T) {
	t.Parallel()
	warn := reconcile.Finding{ID: "token_conservation", Severity: reconcile.Warn, Verdict: "differs"}
	var s steadyFindings
	if got := s.filter(Progress{Findings: []reconcile.Finding{warn}}).Findings; len(got) != 0 {
		t.Errorf("first look: %v, want the warning held back", got)
	}
	if got := s.filter(Progress{Findings: []reconcile.Finding{warn}}).Findings; len(got) != 1 {
		t.Errorf("second look: %v, want the warning", got)
	}
	if got := s.filter(Progress{}).Findings; len(got) != 0 {
		t.Errorf("gone: %v", got)
	}
	if got := s.filter(Progress{Findings: []reconcile.Finding{warn}}).Findings; len(got) != 0 {
		t.Errorf("back after a gap: %v, want it held back again", got)
	}
}

// Requests cancelled by a second Ctrl-C are counted apart: not failures.
func TestLiveCanceledAreNotFailures(t *testing.T) {
	w := newWindow(time.Minute)
	recs := []client.Record{rec(10*msec, 50*msec, 4), rec(10*msec, 50*msec, 4), rec(10*msec, 50*msec, 4), rec(10*msec, 50*msec, 4),
		{ErrorClass: client.ErrHTTPStatus, Status: 500, End: 10 * msec}, {ErrorClass: client.ErrCanceled, End: 10 * msec}}
	for i := range recs {
		w.addRecord(&recs[i], time.Second)
	}
	if p := w.progress(time.Second); p.Failed != 1 || p.Canceled != 1 || p.OK != 4 || p.Errors[client.ErrCanceled] != 0 {
		t.Errorf("live: ok %d, failed %d, canceled %d, errors %v; want 4, 1, 1 and no canceled error", p.OK, p.Failed, p.Canceled, p.Errors)
	}
}

const msec = time.Millisecond

// rec is a successful request sent at 0 with its first token at ttft, its
// end at e2e and n output tokens.
func rec(ttft, e2e time.Duration, n int) client.Record {
	return client.Record{Sent: 0, Wrote: 0, FirstToken: ttft, End: e2e, OutputTokens: n}
}

// streamed is a successful streamed request sent at 0: its first output
// chunk at first, then one chunk every gap carrying per tokens each, n
// chunks in all; the stream ends at the last chunk.
func streamed(first, gap time.Duration, n, per int) client.Record {
	r := client.Record{FirstToken: first, FirstContent: first, TokenSource: client.TokensFromUsage,
		TokensPerChunkSource: client.ChunkTokensUsageGrowth}
	for i := range n {
		r.Chunks = append(r.Chunks, client.Chunk{At: first + time.Duration(i)*gap, Tokens: int32(per)})
	}
	r.OutputTokens = n * per
	r.End = r.Chunks[n-1].At
	return r
}
