package run

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestOwnMetricsDuringTheRun: with MetricsAddr, llmbench serves its own
// /metrics while the load runs: requests by outcome, in flight, the current
// phase, scrapes.
func TestOwnMetricsDuringTheRun(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, `
name: own
engine: {kind: sim, preset: tiny, process: inline}
workload: {concurrency: 2, duration: 2s, prompt_tokens: 8, output_tokens: 8}
scrape: {interval: 200ms}
`)
	errb := &syncBuffer{}
	var mu sync.Mutex
	var page string
	view := func(ctx context.Context, _ Live) {
		m := regexp.MustCompile(`its own metrics at (http://\S+/metrics)`).FindStringSubmatch(errb.String())
		if m == nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(1200 * time.Millisecond):
		}
		resp, err := http.Get(m[1])
		if err != nil {
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		mu.Lock()
		page = string(b)
		mu.Unlock()
	}
	res, err := Run(t.Context(), Config{Scenario: path, RunsDir: t.TempDir(), Views: []View{view}, MetricsAddr: "127.0.0.1:0"}, IO{Stderr: errb})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	// A closed loop has no schedule to lag behind (issue 20: 949 s of lag over
	// 207 closed-loop requests): the histogram agrees with the summary, which
	// counts no closed-loop request.
	if n := res.Summary.Health.ScheduleLag.N; n != 0 {
		t.Errorf("summary: %d schedule-lag samples in a closed loop, want 0", n)
	}
	for _, want := range []string{"llmbench_schedule_lag_seconds_sum 0\n", "llmbench_schedule_lag_seconds_count 0\n"} {
		if !strings.Contains(page, want) {
			t.Errorf("closed loop: own /metrics lacks %q (closed-loop schedule lag is 0):\n%s", want, grepLines(page, "schedule_lag_seconds_(sum|count)"))
		}
	}
	for _, want := range []string{`llmbench_requests_total{outcome="ok"}`, "llmbench_requests_in_flight", `llmbench_phase{phase="main"} 1`, `llmbench_scrapes_total{result="ok"}`, "llmbench_ttft_seconds_bucket"} {
		if !strings.Contains(page, want) {
			t.Errorf("llmbench's own /metrics during the run lacks %s:\n%s", want, page)
		}
	}
}

// grepLines is the lines of page matching pattern, for a short failure message.
func grepLines(page, pattern string) string {
	re := regexp.MustCompile(pattern)
	var out []string
	for _, l := range strings.Split(page, "\n") {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
