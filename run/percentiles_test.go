package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/rundir"
)

// report.percentiles: the summary, every report's latency table and the
// gates use the scenario's quantiles.
func TestConfiguredPercentiles(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, `
name: pct
engine: {kind: sim, preset: tiny, process: inline}
workload: {concurrency: 2, requests: 40, prompt_tokens: 8, output_tokens: 8}
report: {percentiles: [50, 95, 99.9]}
gates: {thresholds: ["client.ttft.p99.9 < 10s", "phase[main].client.e2e.p95 < 1us", "server.ttft.p99.9 < 100s", "phase[main].server.e2e.p95 > 1000s"]}
`)
	var out strings.Builder
	res, err := Run(t.Context(), Config{Scenario: path, RunsDir: t.TempDir()}, IO{Stdout: &out})
	// 40 requests do not bound a client p99.9 (inconclusive); the engine's
	// is known to its bucket. The engine's e2e p95 fails whatever bucket it
	// falls in (every finite bucket lies below 1000 s; "< 1us" was
	// inconclusive whenever it fell in the first bucket, whose lower bound
	// is 0, and failed otherwise: a test of the machine's speed). A run the
	// busy host delayed is not valid: all four are inconclusive then,
	// naming why.
	var gf *GatesFailed
	s := res.Summary
	if !s.Health.Valid {
		t.Logf("the run is not valid (states %+v): its latency gates are inconclusive", s.Health.States)
		if !errors.As(err, &gf) || gf.Inconclusive != 4 {
			t.Fatalf("run: %v, want the four gates of a run not valid inconclusive", err)
		}
	} else if !errors.As(err, &gf) || gf.Failed != 2 || gf.Unevaluable != 0 || gf.Inconclusive != 1 {
		t.Fatalf("run: %v, want the client's and the engine's e2e p95 gates failed, the engine's p99.9 passed and the client's inconclusive", err)
	}
	ttft := s.Client.Latency.TTFT
	if _, ok := ttft.Quantiles["p99.9"]; !ok || len(s.Percentiles) != 3 {
		t.Errorf("percentiles %v, ttft quantiles %v", s.Percentiles, ttft.Quantiles)
	}
	if e, ok := s.Server.Latency["ttft"].Quantile(99.9); !ok || e.Bucket[1] == 0 {
		t.Errorf("engine ttft p99.9 %+v (%v)", e, ok)
	}
	// The latency table's header: n, the mean, then the scenario's
	// percentiles, in order (the client's row and the engine's under it
	// share these columns).
	header := ""
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "latency (ms)") {
			header = strings.Join(strings.Fields(l), " ")
		}
	}
	if header != "latency (ms) n mean p50 p95 p99.9" {
		t.Errorf("text summary's latency table header %q:\n%s", header, out.String())
	}
	for _, f := range []string{rundir.MarkdownFile, "report.html"} {
		b, err := os.ReadFile(filepath.Join(res.Dir, f))
		if err != nil || !strings.Contains(string(b), "p99.9") {
			t.Errorf("%s lacks the p99.9 column (%v)", f, err)
		}
	}
}
