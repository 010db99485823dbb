package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
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

	w := newLiveWindow(10 * time.Second)
	w.slo = &rundir.SLO{TTFT: 100 * ms}
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

// The live view warns about the client only when two looks in a row agree,
// and says what follows for its latencies.
func TestLiveClientWarning(t *testing.T) {
	dir := t.TempDir()
	rec, err := NewRecorder(filepath.Join(dir, "run"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
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
