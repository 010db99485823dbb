package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/run"
	"github.com/llmbench-org/llmbench/rundir"
)

func TestExitCodes(t *testing.T) {
	t.Parallel()
	bad := writeScenario(t, "name: x\nworkload:\n  concurrency: 2\n  duration: 1s\n  bogus_key: 3\n")
	tests := []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"version", []string{"version"}, exitOK, ""},
		{"--version", []string{"--version"}, exitOK, ""},
		{"unknown command", []string{"bogus"}, exitUsage, "unknown command"},
		// cobra's own suggestions (decision 0024), still a usage error.
		{"mistyped command", []string{"rnu"}, exitUsage, "unknown command \"rnu\" for \"llmbench\"\n\nDid you mean this?\n\trun\n"},
		{"mistyped command with its arguments", []string{"valdate", "x.yaml"}, exitUsage, "Did you mean this?\n\tvalidate\n"},
		{"run without a file", []string{"run"}, exitUsage, "no scenario"},
		{"unknown flag", []string{"run", "--nope", "x.yaml"}, exitUsage, "unknown flag"},
		{"missing scenario file", []string{"run", filepath.Join(t.TempDir(), "none.yaml")}, exitUsage, "none.yaml"},
		{"unknown key names file and line", []string{"run", bad}, exitUsage, filepath.Base(bad) + ":5"},
		{"bad output mode", []string{"run", "--output", "fancy", bad}, exitUsage, "--output"},
		{"tui without a terminal", []string{"run", "--output", "tui", bad}, exitUsage, "--output tui needs a terminal"},
		{"report of a non-run directory", []string{"report", t.TempDir()}, exitUsage, "not a run directory"},
		{"compare needs two runs", []string{"compare", t.TempDir()}, exitUsage, "arg"},
		{"compare of a non-run directory", []string{"compare", t.TempDir(), t.TempDir()}, exitUsage, "not a run directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cio, _, stderr := testIO(nil)
			code := execute(context.Background(), cio, tt.args)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stderr: %s", code, tt.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.inStderr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.inStderr)
			}
		})
	}
}

// runInterrupted runs a long scenario and sends n signals, the first once the
// live line says inFlight requests are in flight; it returns the run
// directory and the run's error.
func runInterrupted(t *testing.T, n, inFlight int, outputTokens string) (string, error) {
	t.Helper()
	path := writeScenario(t, `
name: interrupt
engine:
  kind: sim
workload:
  concurrency: 4
  duration: 60s
  prompt_tokens: 32
  output_tokens: `+outputTokens+`
scrape:
  interval: 250ms
`)
	sigs := make(chan os.Signal, 2)
	cio, _, stderr := testIO(sigs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go func() {
		// Once the live line (on stderr) says so: the run's own word, not a fixed
		// delay (1.5 s was before the engine had started, beside two CPU
		// hogs under -race).
		waitFor(ctx, stderr.String, regexp.MustCompile(fmt.Sprintf(`in flight [%d-9],`, inFlight)))
		for range n {
			sigs <- syscall.SIGINT
			time.Sleep(200 * time.Millisecond)
		}
	}()
	dir, err := runScenario(ctx, runOpts{scenario: path, runsDir: t.TempDir(), output: "plain", every: time.Second}, cio)
	t.Logf("stderr:\n%s", stderr.String())
	return dir, err
}

func TestFirstInterruptDrainsInFlightRequests(t *testing.T) {
	t.Parallel()
	dir, err := runInterrupted(t, 1, 1, "64")
	if !errors.Is(err, run.ErrInterrupted) {
		t.Fatalf("run error %v, want it to say it was interrupted", err)
	}
	if exitCode(err) != exitRuntime {
		t.Errorf("exit code %d, want %d", exitCode(err), exitRuntime)
	}
	records := readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile))
	if len(records) == 0 {
		t.Fatal("no records kept")
	}
	for _, r := range records {
		if !r.OK() {
			t.Errorf("request %s: %s (%s); a drain lets in-flight requests finish", r.ID, r.ErrorClass, r.Error)
		}
	}
	s, err := report.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Health.Valid || s.Run.Stopped == "" {
		t.Errorf("an interrupted run must say so: valid=%v stopped=%q", s.Health.Valid, s.Run.Stopped)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.SummaryFile)); err != nil {
		t.Errorf("no summary after an interrupt: %v", err)
	}
}

func TestSecondInterruptAbortsAndKeepsRecords(t *testing.T) {
	t.Parallel()
	// Requests of 4,000 tokens last far longer than the test: only an abort ends them.
	dir, err := runInterrupted(t, 2, 4, "4000")
	if !errors.Is(err, run.ErrInterrupted) {
		t.Fatalf("run error %v, want it to say it was interrupted", err)
	}
	records := readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile))
	canceled := 0
	for _, r := range records {
		if r.ErrorClass == client.ErrCanceled {
			canceled++
			if len(r.Chunks) == 0 {
				t.Errorf("aborted request %s kept no chunks: what arrived before the abort is lost", r.ID)
			}
		}
	}
	if canceled != 4 {
		t.Errorf("%d canceled records, want the 4 in flight (records: %d)", canceled, len(records))
	}
}

// TestRunGatesDecideTheExitCode: a run whose gate fails exits 3, one whose
// gate is inconclusive exits 4 (a p99 of 8 requests has no upper bound), and
// each writes the gates' JUnit report into the run directory. The gates are
// counts where the outcome must not depend on whether the busy host left
// the run valid.
func TestRunGatesDecideTheExitCode(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, `
name: gated
engine: {kind: sim, preset: tiny}
workload: {concurrency: 2, requests: 8, prompt_tokens: 16, output_tokens: 8}
gates:
  thresholds: ["client.requests.failed == 0"]
`)
	runs := t.TempDir()
	for _, tc := range []struct {
		extra string
		code  int
	}{{"client.requests.ok == 8", exitOK}, {"client.requests.ok == 0", exitGate}, {"client.ttft.p99 < 10s", exitInconclusive}} {
		cio, stdout, stderr := testIO(nil)
		code := execute(context.Background(), cio, []string{"run", "--output", "plain", "--runs", runs, "--threshold", tc.extra, path})
		if code != tc.code {
			t.Errorf("--threshold %q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tc.extra, code, tc.code, stdout.String(), stderr.String())
		}
	}
	junits, _ := filepath.Glob(filepath.Join(runs, "*", "junit.xml"))
	if len(junits) != 3 {
		t.Errorf("junit.xml in %d run directories, want 3", len(junits))
	}
}

// TestEveryRequestFailing: against a server that answers every chat request
// with an error, the run still writes its directory and summary, names what
// went wrong, and exits 1.
func TestEveryRequestFailing(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model"}]}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"message":"overloaded, try later","type":"server_error","code":503}}`))
	}))
	defer srv.Close()
	path := writeScenario(t, `
name: failing
model: m
engine: {kind: external, base_url: "`+srv.URL+`/v1"}
workload: {concurrency: 2, requests: 6, prompt_tokens: 8, output_tokens: 8}
`)
	runs := t.TempDir()
	cio, stdout, stderr := testIO(nil)
	code := execute(context.Background(), cio, []string{"run", "--output", "plain", "--runs", runs, path})
	if code != exitRuntime || !strings.Contains(stderr.String(), "every request failed (6)") {
		t.Errorf("exit %d, stderr %q: want 1 and the reason", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "http_status, e.g.:") || !strings.Contains(stdout.String(), "overloaded, try later") {
		t.Errorf("the summary does not show what went wrong:\n%s", stdout.String())
	}
	if sums, _ := filepath.Glob(filepath.Join(runs, "*", rundir.SummaryFile)); len(sums) != 1 {
		t.Errorf("summary files %v, want the failed run's", sums)
	}
}

// TestEngineDiesMidRun: when the engine goes away, the run stops once
// nothing could connect for abort.unreachable, exits 1 saying why, and keeps
// the summary of what it measured before.
func TestEngineDiesMidRun(t *testing.T) {
	t.Parallel()
	e, ep := startSim(t, sim.Config{Dialect: sim.DialectVLLM})
	path := writeScenario(t, `
name: dies
engine: {kind: external, base_url: "`+ep.BaseURL+`", metrics_url: "`+ep.MetricsURL+`"}
workload: {concurrency: 4, duration: 1m, prompt_tokens: 16, output_tokens: 8, abort: {unreachable: 1s}}
scrape: {interval: 200ms}
`)
	go func() {
		// Once the engine has finished a request (its own counter), not
		// after a fixed second: beside two CPU hogs under -race the run
		// had not connected by then.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		waitFor(ctx, func() string { return metricsText(ep.MetricsURL) }, regexp.MustCompile(`(?m)^vllm:request_success_total\{[^}]*\} [1-9]`))
		stop, cancelStop := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancelStop()
		_ = e.Stop(stop)
	}()
	runs := t.TempDir()
	cio, _, stderr := testIO(nil)
	start := time.Now()
	code := execute(context.Background(), cio, []string{"run", "--output", "plain", "--runs", runs, path})
	if code != exitRuntime || !strings.Contains(stderr.String(), "no request could connect to the engine for") {
		t.Errorf("exit %d, stderr %q: want 1 and the reason", code, stderr.String())
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the run went on for %v after the engine died", took)
	}
	s, _ := onlyRun(t, runs)
	if s.Client.Requests.OK == 0 || s.Health.Valid || !strings.Contains(s.Run.Stopped, "no request could connect to the engine") {
		t.Errorf("ok %d, valid %v, stopped %q: want the requests before the death kept and the stop explained",
			s.Client.Requests.OK, s.Health.Valid, s.Run.Stopped)
	}
}

// TestWrongModelStopsAtOnce: an engine that rejects every request (here, a
// model it does not serve) stops a ten-minute run after its first 20
// failures, exit 1, with the engine's own message in the summary.
func TestWrongModelStopsAtOnce(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"message":"The model 'llama-typo' does not exist.","type":"NotFoundError","code":404}}`))
	}))
	defer srv.Close()
	path := writeScenario(t, `
name: typo
model: llama-typo
engine: {kind: external, base_url: "`+srv.URL+`/v1"}
workload: {concurrency: 4, duration: 10m, prompt_tokens: 8, output_tokens: 8}
`)
	runs := t.TempDir()
	cio, stdout, stderr := testIO(nil)
	start := time.Now()
	code := execute(context.Background(), cio, []string{"run", "--output", "plain", "--runs", runs, path})
	if code != exitRuntime || !strings.Contains(stderr.String(), "the first 20 requests all failed") {
		t.Errorf("exit %d, stderr %q: want 1 and the reason", code, stderr.String())
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("took %v", took)
	}
	if !strings.Contains(stdout.String(), "does not exist") {
		t.Errorf("the summary does not show the engine's message:\n%s", stdout.String())
	}
}

// TestStalledEngineTimesOut: an engine that stops streaming mid-answer
// holds each request only until workload.timeout, which then fails with
// class timeout, and the run ends instead of waiting forever.
func TestStalledEngineTimesOut(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, `
name: stalled
engine:
  kind: sim
  preset: tiny
  process: inline
  faults: {stall_rate: 1, stall_for: 10m, after_tokens: 2}
workload: {concurrency: 2, requests: 4, prompt_tokens: 8, output_tokens: 16, timeout: 300ms}
`)
	runs := t.TempDir()
	cio, _, stderr := testIO(nil)
	start := time.Now()
	code := execute(context.Background(), cio, []string{"run", "--output", "plain", "--runs", runs, path})
	if code != exitRuntime || !strings.Contains(stderr.String(), "every request failed (4)") {
		t.Errorf("exit %d, stderr %q: want 1, every request failed", code, stderr.String())
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("took %v: the timeout did not end the stalled requests", took)
	}
	s, _ := onlyRun(t, runs)
	if s.Client.Requests.Errors["timeout"] != 4 {
		t.Errorf("errors %v, want 4 timeouts", s.Client.Requests.Errors)
	}
}

// waitFor polls text until it matches re or ctx ends: a test's trigger on
// what the run or the engine says has happened, not on a fixed delay.
func waitFor(ctx context.Context, text func() string, re *regexp.Regexp) {
	for !re.MatchString(text()) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// metricsText is the body of a GET of url ("" when it fails).
func metricsText(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
