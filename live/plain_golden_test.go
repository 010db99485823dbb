package live

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/report/reconcile"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// plainRun is the looks of a short run as the plain view meets them: the
// first look before any request finished, steady looks with the engine's
// gauges, a warning that appears and stays, an outage, the last look,
// then an agentic replay's with its sessions and images.
func plainRun() []Progress {
	pct := []float64{50, 90, 99}
	q := func(a, b, c time.Duration) Quantiles { return Quantiles{N: 40, Values: []time.Duration{a, b, c}} }
	server := ServerLive{HasRunning: true, Running: 15, HasWait: true, Waiting: 0, HasKV: true, KVUsage: 0.021}
	warn := reconcile.Finding{ID: "token_conservation", Severity: reconcile.Warn,
		Verdict: "the engine counted 1,204 prompt tokens more than the client sent (1.7 %): its chat template adds them"}
	info := reconcile.Finding{ID: "scrape_health", Severity: reconcile.Info, Verdict: "all scrapes answered"}
	return []Progress{
		{Elapsed: 2100 * time.Millisecond, Sent: 16, InFlight: 16, Percentiles: pct, Server: server},
		{Elapsed: 4100 * time.Millisecond, Sent: 93, InFlight: 16, OK: 77, RequestsPerSec: 18.9, OutputTokensPerSec: 2085,
			Percentiles: pct, TTFT: q(19700*time.Microsecond, 24*msec, 95100*time.Microsecond), Server: server,
			Findings: []reconcile.Finding{info}},
		{Elapsed: 6100 * time.Millisecond, Sent: 136, InFlight: 16, OK: 120, RequestsPerSec: 19.7, OutputTokensPerSec: 2156,
			Percentiles: pct, TTFT: q(19*msec, 25*msec, 95100*time.Microsecond), Server: server,
			Findings: []reconcile.Finding{info, warn}},
		{Elapsed: 8100 * time.Millisecond, Sent: 171, InFlight: 16, OK: 150, Failed: 5, RequestsPerSec: 14.2, OutputTokensPerSec: 1530,
			Percentiles: pct, TTFT: q(19*msec, 26*msec, 96*msec), Server: server, ScrapeFailures: 1,
			Outage: OutageLive{Open: true, Since: 7 * time.Second, Attempts: 5}, Silent: 3, SilentFor: 1100 * time.Millisecond,
			Findings: []reconcile.Finding{info, warn}},
		{Elapsed: 20800 * time.Millisecond, Sent: 449, OK: 444, Failed: 5, RequestsPerSec: 21.3, OutputTokensPerSec: 2292.7,
			Percentiles: pct, TTFT: q(18700*time.Microsecond, 25*msec, 94600*time.Microsecond), Server: server, ScrapeFailures: 1,
			HasGoodput: true, GoodputPerSec: 20.9, GoodFraction: 0.98, Findings: []reconcile.Finding{info, warn}},
		// An agentic replay with images: the window's sessions' prefix
		// cache and its images (sessions.go).
		{Elapsed: 22800 * time.Millisecond, Sent: 470, InFlight: 3, OK: 465, Failed: 5, RequestsPerSec: 2.1, OutputTokensPerSec: 210.4,
			Percentiles: pct, TTFT: q(38*msec, 52*msec, 120*msec), Server: server, Findings: []reconcile.Finding{info},
			Sessions: SessionsLive{Sessions: 3, HitRateP50: 0.62, HitRateMin: 0.4, OverallRate: 0.63},
			Images:   ImagesLive{Images: 20, PerSec: 2, TokensPerImage: 326}},
	}
}

// TestPlainProgressGolden: the plain view's lines for a run's looks, at
// 80 and 100 columns, are the golden files (go test ./live -update
// rewrites them).
func TestPlainProgressGolden(t *testing.T) {
	t.Parallel()
	for _, width := range []int{80, 100} {
		pp := plainPrinter{width: width}
		var b strings.Builder
		for _, p := range plainRun() {
			for _, l := range pp.lines(p) {
				fmt.Fprintln(&b, l)
			}
		}
		path := filepath.Join("testdata", fmt.Sprintf("plain_progress_%d.golden.txt", width))
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./live -run TestPlainProgressGolden -update writes it)", err)
		}
		if b.String() != string(want) {
			t.Errorf("plain lines at %d columns differ from %s:\n%s", width, path, b.String())
		}
	}
}
