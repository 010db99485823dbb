package live

import (
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/internal/textwidth"
	"github.com/llmbench-org/llmbench/report/reconcile"
)

// busy is a look with everything at once: an outage, requests with no
// byte, the client throttled, two warnings with long verdicts, goodput,
// the engine's gauges, large counts.
func busy() Progress {
	long := strings.Repeat("the engine counted fewer tokens than the client did ", 8)
	return Progress{Elapsed: 1234567 * time.Millisecond, Sent: 1234567, InFlight: 4096, OK: 1200000, Failed: 34567, Canceled: 12,
		RequestsPerSec: 1234.5, OutputTokensPerSec: 123456, HasGoodput: true, GoodputPerSec: 1000.5, GoodFraction: 0.81, Unmeasured: 3,
		Percentiles: []float64{50, 90, 99}, TTFT: Quantiles{N: 9, Values: []time.Duration{10 * msec, 20 * msec, 30 * msec}},
		TTFC: Quantiles{N: 9, Values: []time.Duration{11 * msec, 21 * msec, 31 * msec}}, TTFCDiffers: true,
		NotStreamed: 5, StreamsWithoutDone: 6, ScrapeFailures: 7,
		Server: ServerLive{HasRunning: true, Running: 64, HasWait: true, Waiting: 12, HasKV: true, KVUsage: 0.5},
		Client: ClientLive{Delay: "cpu_throttled", ThrottledPeriods: 9, Throttled: 610 * msec, CPUQuota: 0.2},
		Outage: OutageLive{Open: true, Since: 1200 * time.Second, Attempts: 321},
		Silent: 17, SilentFor: 42 * time.Second,
		Findings: []reconcile.Finding{{ID: "token_conservation", Severity: reconcile.Warn, Verdict: long}, {ID: "concurrency", Severity: reconcile.Warn, Verdict: long}, {ID: "scrape_health", Severity: reconcile.Info, Verdict: long}},
	}
}

// TestPlainLinesFitTheWidth: however much a look holds, no plain line is
// wider than the width, and the outage, the requests with no byte and
// the count of warnings are all still there; no figure is dropped from 80
// columns up.
func TestPlainLinesFitTheWidth(t *testing.T) {
	t.Parallel()
	for _, width := range []int{60, 80, 100} {
		pp := plainPrinter{width: width}
		lines := pp.lines(busy())
		text := strings.Join(lines, "\n")
		for _, l := range lines {
			if textwidth.Len(l) > width {
				t.Errorf("at %d: a line of %d: %q", width, textwidth.Len(l), l)
			}
		}
		for _, want := range []string{"OUTAGE: engine unreachable for 34.6s (321 failed attempts)", "waiting on 17 requests with no byte received for 42s",
			"3 warnings", "WARN client: its container's CPU limit", "WARN token_conservation: the engine counted", "WARN concurrency: ",
			"TTFT p50 10.0ms p99 30.0ms", "goodput 1000.5 req/s (81%, 3 unmeasured)", "5 not streamed", "6 streams without [DONE]",
			"TTFC p50 11.0ms", "server running 64 waiting 12 kv 50%", "scrape failures 7", "12 canceled"} {
			// At 60 columns the totals line of a run this large is cut
			// (its canceled count with it); every other figure has a line.
			if !strings.Contains(text, want) && (width >= 80 || want != "12 canceled") {
				t.Errorf("at %d: lacks %q:\n%s", width, want, text)
			}
		}
		if strings.Contains(text, "scrape_health") {
			t.Errorf("at %d: an INFO check printed:\n%s", width, text)
		}
	}
}

// TestPlainWarningsOnce: a warning is printed on its own line when it
// first appears and not again; the progress lines count the active ones.
func TestPlainWarningsOnce(t *testing.T) {
	t.Parallel()
	a := reconcile.Finding{ID: "token_conservation", Severity: reconcile.Warn, Verdict: "prompt tokens differ"}
	b := reconcile.Finding{ID: "concurrency", Severity: reconcile.Warn, Verdict: "the engine ran fewer"}
	var pp plainPrinter
	looks := []struct {
		findings []reconcile.Finding
		warns    []string // the WARN lines this look prints
		count    string   // on the progress line; "" for none
	}{
		{nil, nil, ""},
		{[]reconcile.Finding{a}, []string{"WARN token_conservation: prompt tokens differ"}, "1 warning"},
		{[]reconcile.Finding{a}, nil, "1 warning"},
		{[]reconcile.Finding{a, b}, []string{"WARN concurrency: the engine ran fewer"}, "2 warnings"},
		{[]reconcile.Finding{b}, nil, "1 warning"},
	}
	for i, look := range looks {
		lines := pp.lines(Progress{Findings: look.findings})
		var warns []string
		for _, l := range lines {
			if strings.HasPrefix(l, "WARN ") {
				warns = append(warns, l)
			}
		}
		if strings.Join(warns, "\n") != strings.Join(look.warns, "\n") {
			t.Errorf("look %d: warning lines %q, want %q", i, warns, look.warns)
		}
		last := lines[len(lines)-1]
		if look.count == "" && strings.Contains(last, "warning") || look.count != "" && !strings.HasSuffix(last, "| "+look.count) {
			t.Errorf("look %d: progress line %q, want the count %q", i, last, look.count)
		}
	}
}
