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
	if _, err := Run(t.Context(), Config{Scenario: path, RunsDir: t.TempDir(), Views: []View{view}, MetricsAddr: "127.0.0.1:0"}, IO{Stderr: errb}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{`llmbench_requests_total{outcome="ok"}`, "llmbench_requests_in_flight", `llmbench_phase{phase="main"} 1`, `llmbench_scrapes_total{result="ok"}`, "llmbench_ttft_seconds_bucket"} {
		if !strings.Contains(page, want) {
			t.Errorf("llmbench's own /metrics during the run lacks %s:\n%s", want, page)
		}
	}
}
