package run

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// The fault matrix: the built-in engine's faults, small hostile servers and
// broken scenarios. Every case asserts that the run ends within its bound,
// how it ends (completed, failed, stopped, refused before starting), that
// every request sent has exactly one record and the summary counts them, and
// that no secret appears in any file the run wrote or anything it printed.

// faultSecret is an API key the runs send; it must never be written or
// printed, even when a server echoes it.
const faultSecret = "sk-llmbench-SECRET-7f3a9c"

// outcome is how a run must end.
type outcome int

const (
	completed   outcome = iota // no error
	failed                     // an error from the run (exit 1)
	refused                    // a *ConfigError before anything was sent (exit 2)
	interrupted                // ErrInterrupted
)

func (o outcome) String() string {
	return [...]string{"completed", "failed", "refused", "interrupted"}[o]
}

type faultCase struct {
	name string
	// scenario returns the scenario's YAML; srv is the hostile server's URL
	// ("" when the case has none).
	scenario func(srv string) string
	server   http.HandlerFunc // a hostile engine (nil: none)
	stopAt   time.Duration    // the first interrupt after this (0: none)
	abortAt  time.Duration    // the second after this (0: none)
	bound    time.Duration    // the run ends within this
	want     outcome
	errHas   string                                 // the error says this
	check    func(t *testing.T, fr faultRun)        // more, case by case
	records  func(t *testing.T, rs []client.Record) // each record, when the run made some
	// heap bounds the growth of the process's heap during the run (0: not
	// checked). Such cases run one at a time in TestFaultMemory, where no
	// other test allocates beside them.
	heap uint64
	// after checks more whatever the outcome, also of a run that ended
	// before it had a summary (a launched engine that never started).
	after func(t *testing.T, fr faultRun)
	// cpu marks a case that keeps a core busy (a hostile server that
	// writes as fast as it can, an engine that floods its log): it runs as
	// a parallel subtest, not in TestFaultMatrix's lanes.
	cpu bool
}

type faultRun struct {
	dir            string
	err            error
	stdout, stderr string
	sum            report.Summary
	records        []client.Record
	// undecided says why the case's time bound was not decided: the run
	// overran it while other processes took the machine (the caller skips
	// the case, saying so, once everything else it checks has passed).
	undecided string
	// late holds what the case's checks found out of a real-time bound
	// (fr.timed): runFault decides them by the machine, as the run's own
	// time bound.
	late *[]string
}

// timed is a check's miss of a bound on real time, which the machine's
// other work can move: an outage's length against the engine's downtime,
// the period between outages, a mean ITL against the engine's flushes. On a
// quiet machine (or one the platform cannot measure) it fails the case;
// while other processes used more than quiet.BusyShare of the machine it
// leaves the case undecided, skipped once its other checks pass. What the
// run controls (counts, classes, the attempts its back-off allows) is
// checked with t.Errorf, whatever the machine.
func (fr faultRun) timed(format string, a ...any) {
	*fr.late = append(*fr.late, fmt.Sprintf(format, a...))
}

// skipIfUndecided skips a case whose time bound was undecided, once all its
// other checks passed: the bound is decided on a quiet machine.
func (fr faultRun) skipIfUndecided(t *testing.T) {
	t.Helper()
	if fr.undecided != "" && !t.Failed() {
		t.Skip(fr.undecided)
	}
}

// simYAML is a short closed-loop run against the built-in engine with the
// given engine lines (faults, dialect) and workload lines.
func simYAML(engine, workload string) func(string) string {
	return func(string) string {
		return fmt.Sprintf(`
name: fault
engine:
  kind: sim
  preset: tiny
  process: inline
%s
workload:
  concurrency: 4
  prompt_tokens: 16
  output_tokens: 16
%s
scrape: {interval: 300ms, timeout: 250ms}
`, engine, workload)
	}
}

// externalYAML points a scenario at the hostile server.
// scrapesAnswered4xx counts the run's scrapes the server refused (a 4xx:
// the key missing, refused, or sent where it must not go). A scrape that
// timed out is not one: its 250-ms bound is the machine's to miss.
func scrapesAnswered4xx(t *testing.T, fr faultRun) int {
	t.Helper()
	rows, _, err := rundir.ReadRows(fr.dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.Status >= 400 && r.Status < 500 {
			n++
		}
	}
	return n
}

func externalYAML(workload, extra string) func(string) string {
	return func(srv string) string {
		return fmt.Sprintf(`
name: fault
model: m
engine:
  kind: external
  base_url: %s/v1
  metrics_url: %s/metrics
  api_key_env: FAULT_KEY
workload:
  concurrency: 2
  prompt_tokens: 8
  output_tokens: 4
%s
scrape: {interval: 300ms, timeout: 250ms}
%s`, srv, srv, workload, extra)
	}
}

// sse writes a well-formed stream of n content chunks, then finish, usage
// and [DONE]; before it, what head writes.
func sse(w http.ResponseWriter, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	f, _ := w.(http.Flusher)
	for i := range n {
		fmt.Fprintf(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"w%d \"}}]}\n\n", i)
		if f != nil {
			f.Flush()
		}
	}
	fmt.Fprintf(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
	fmt.Fprintf(w, "data: {\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", n, n+8)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// breakModels is a good engine whose /v1/models resets the connection of
// the requests broken picks (numbered from 1), as a process that dies or
// restarts does.
func breakModels(broken func(n int32) bool) http.HandlerFunc {
	var n atomic.Int32
	good := engineWith(goodChat, nil)
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" && broken(n.Add(1)) {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
				_ = conn.Close()
			}
			return
		}
		good(w, r)
	}
}

// breakConnections is a good engine that resets, at their first request,
// the connections broken picks (numbered from 1 in the order their first
// request came). By connection, not by request: net/http sends a GET again
// on its own when a reused connection breaks, which a count of requests
// would take for an answer.
func breakConnections(broken func(n int) bool) http.HandlerFunc {
	var mu sync.Mutex
	seen := map[string]int{}
	good := engineWith(goodChat, nil)
	return func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n, ok := seen[r.RemoteAddr]
		if !ok {
			n = len(seen) + 1
			seen[r.RemoteAddr] = n
		}
		mu.Unlock()
		if !ok && broken(n) {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
				_ = conn.Close()
			}
			return
		}
		good(w, r)
	}
}

// engineWith is a hostile engine: chat answers as chat says, /metrics as
// metrics says (a good vLLM page when nil), /v1/models lists "m".
func engineWith(chat http.HandlerFunc, metrics http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/models":
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
		case r.URL.Path == "/metrics" && metrics != nil:
			metrics(w, r)
		case r.URL.Path == "/metrics":
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			fmt.Fprint(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 0\n")
		case strings.HasSuffix(r.URL.Path, "/chat/completions"):
			chat(w, r)
		default:
			http.NotFound(w, r)
		}
	}
}

func goodChat(w http.ResponseWriter, _ *http.Request) { sse(w, 4) }

func metricsText(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, body)
	}
}

// everyRecordFailed checks that no request succeeded, each with a class.
// (Requests in flight when an abort condition stopped the run are canceled.)
func everyRecordFailed(class client.ErrorClass) func(*testing.T, []client.Record) {
	return func(t *testing.T, rs []client.Record) {
		for _, r := range rs {
			if r.OK() || (class != "" && r.ErrorClass != class && r.ErrorClass != client.ErrCanceled) {
				t.Errorf("%s: %q %q, want class %q", r.ID, r.ErrorClass, r.Error, class)
			}
		}
	}
}

// someFailedAs checks that some requests failed with class and the rest succeeded.
func someFailedAs(class client.ErrorClass) func(*testing.T, []client.Record) {
	return func(t *testing.T, rs []client.Record) {
		n := 0
		for _, r := range rs {
			switch {
			case r.OK():
			case r.ErrorClass == class:
				n++
			default:
				t.Errorf("%s: %q %q, want success or %q", r.ID, r.ErrorClass, r.Error, class)
			}
		}
		if n == 0 {
			t.Errorf("no request failed as %q", class)
		}
	}
}

func allOK(t *testing.T, rs []client.Record) {
	for _, r := range rs {
		if !r.OK() {
			t.Errorf("%s: %q %q", r.ID, r.ErrorClass, r.Error)
		}
	}
}

func scrapeFailures(min int) func(*testing.T, faultRun) {
	return func(t *testing.T, fr faultRun) {
		if fr.sum.Health.ScrapeFailures < min {
			t.Errorf("%d scrape failures reported, want at least %d", fr.sum.Health.ScrapeFailures, min)
		}
	}
}

// faultCases is the whole matrix: the cases below and each fault family's
// own file (faults_*_e2e_test.go).
func faultCases() []faultCase {
	var all []faultCase
	for _, family := range [][]faultCase{
		baseFaultCases(), sseFaultCases(), payloadFaultCases(), outageFaultCases(),
		launchFaultCases(), readerFaultCases(),
	} {
		all = append(all, family...)
	}
	return all
}

func baseFaultCases() []faultCase {
	req24 := "  requests: 24"
	return []faultCase{
		// The built-in engine's faults.
		{name: "sim: 30% HTTP errors", scenario: simYAML("  faults: {error_rate: 0.3}", req24), bound: 30 * time.Second, want: completed,
			records: someFailedAs(client.ErrHTTPStatus)},
		{name: "sim: every request an HTTP error", scenario: simYAML("  faults: {error_rate: 1}", req24), bound: 30 * time.Second, want: failed,
			errHas: "the first 20 requests all failed", records: everyRecordFailed(client.ErrHTTPStatus)},
		{name: "sim: 503s with chosen statuses", scenario: simYAML("  faults: {error_rate: 0.5, error_statuses: [429, 503]}", req24), bound: 30 * time.Second, want: completed,
			records: someFailedAs(client.ErrHTTPStatus)},
		{name: "sim: connections reset", scenario: simYAML("  faults: {reset_rate: 0.3}", req24), bound: 30 * time.Second, want: completed,
			records: func(t *testing.T, rs []client.Record) {
				for _, r := range rs {
					if !r.OK() && r.ErrorClass != client.ErrStreamBroken && r.ErrorClass != client.ErrConnect {
						t.Errorf("%s: %q", r.ID, r.ErrorClass)
					}
				}
			}},
		{name: "sim: streams stall past the timeout", scenario: simYAML("  faults: {stall_rate: 0.5, stall_for: 10s}", req24+"\n  timeout: 300ms"), bound: 30 * time.Second, want: completed,
			records: someFailedAs(client.ErrTimeout)},
		{name: "sim: malformed chunks", scenario: simYAML("  faults: {malformed_rate: 0.3}", req24), bound: 30 * time.Second, want: completed,
			records: someFailedAs(client.ErrMalformedChunk)},
		{name: "sim: streams that end without [DONE]", scenario: simYAML("  faults: {missing_done_rate: 0.5}", req24), bound: 30 * time.Second, want: completed,
			records: allOK, check: func(t *testing.T, fr faultRun) {
				if fr.sum.Health.StreamsWithoutDone == 0 {
					t.Error("no stream counted as ending without [DONE]")
				}
			}},
		{name: "sim: error events mid-stream", scenario: simYAML("  faults: {stream_error_rate: 0.3, after_tokens: 2}", req24), bound: 30 * time.Second, want: completed,
			records: someFailedAs(client.ErrStreamBroken)},
		{name: "sim: error events after pings", scenario: simYAML("  sim: {sse_ping: true}\n  faults: {stream_error_rate: 0.5, after_tokens: 2}", req24), bound: 30 * time.Second, want: completed,
			records: func(t *testing.T, rs []client.Record) {
				for _, r := range rs {
					if !r.OK() && (r.ErrorClass != client.ErrStreamBroken || r.Error == "") {
						t.Errorf("%s: %q with message %q: the server's message must be kept", r.ID, r.ErrorClass, r.Error)
					}
				}
			}},
		{name: "sim: slow first bytes", scenario: simYAML("  faults: {slow_first_byte_rate: 0.5, slow_first_byte: 150ms}", req24), bound: 30 * time.Second, want: completed, records: allOK},
		{name: "sim: /metrics answers 500", scenario: simYAML("  faults: {metrics_fail_rate: 1, metrics_fail_mode: status, metrics_fail_status: 500}", req24), bound: 30 * time.Second, want: completed,
			records: allOK, check: scrapeFailures(1)},
		{name: "sim: /metrics slower than the scrape timeout", scenario: simYAML("  faults: {metrics_fail_rate: 1, metrics_fail_mode: timeout, metrics_delay: 2s}", req24), bound: 30 * time.Second, want: completed,
			records: allOK, check: scrapeFailures(1)},
		// The restart falls where no host's timing moves it: after 24
		// finished requests the engine holds new ones until its next
		// scrape, which gets the old process's final counts and restarts
		// it; at most 6 of the 30 finish after it, so the next scrape reads
		// fewer than the one before, exactly once.
		{name: "sim: the engine restarts mid-run", scenario: simYAML("  faults: {restart_at_finished: 24}", "  requests: 30"), bound: 40 * time.Second, want: completed,
			check: func(t *testing.T, fr faultRun) {
				resets := 0
				for _, f := range fr.sum.Findings {
					if f.ID == "counter_reset" {
						resets++
					}
				}
				if resets != 1 {
					t.Errorf("%d counter_reset findings, want the one restart named", resets)
				}
				restarted := false
				for _, st := range fr.sum.Health.States {
					if st.Name == "engine_restarted" {
						restarted = st.Figure == 1
						if !restarted {
							t.Errorf("engine_restarted counts %v restarts, want 1: %s", st.Figure, st.Says)
						}
					}
				}
				if !restarted {
					t.Errorf("no engine_restarted state: %+v", fr.sum.Health.States)
				}
				// Counted across the reset (increase()), with nothing lost:
				// the engine's finished requests are exactly the client's.
				ok := fr.sum.Client.Requests.OK
				if s := fr.sum.Server; s == nil || s.Counters["requests_finished"] != float64(ok) {
					t.Errorf("server view %+v for %d ok requests: want every finish counted once across the restart", s, ok)
				}
			}},
		{name: "sim: streams without [DONE] and with pings", scenario: simYAML("  sim: {no_done: true, sse_ping: true}", req24), bound: 30 * time.Second, want: completed, records: allOK},
		{name: "sim: /metrics malformed", scenario: simYAML("  faults: {metrics_fail_rate: 1, metrics_fail_mode: malformed}", req24), bound: 30 * time.Second, want: completed,
			records: allOK, check: scrapeFailures(1)},
		{name: "sim: several tokens a chunk", scenario: simYAML("  sim: {stream_interval: 3}", req24), bound: 30 * time.Second, want: completed, records: allOK},

		// Hostile servers.
		{name: "server: 404 on every chat request", server: engineWith(http.NotFound, nil), scenario: externalYAML("  requests: 40", ""), bound: 30 * time.Second, want: failed,
			errHas: "the first 20 requests all failed", records: everyRecordFailed(client.ErrHTTPStatus)},
		{name: "server: 500 with a JSON error", server: engineWith(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(500)
			fmt.Fprint(w, `{"error":{"message":"out of memory","type":"server_error"}}`)
		}, nil), scenario: externalYAML("  requests: 8", ""), bound: 30 * time.Second, want: failed, errHas: "every request failed (8)",
			records: func(t *testing.T, rs []client.Record) {
				for _, r := range rs {
					if r.Status != 500 || !strings.Contains(r.Error, "out of memory") {
						t.Errorf("%s: status %d %q: want the server's message", r.ID, r.Status, r.Error)
					}
				}
			}},
		{name: "server: HTML instead of a stream", server: engineWith(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<!DOCTYPE html><html><body>Bad gateway</body></html>")
		}, nil), scenario: externalYAML("  requests: 6", ""), bound: 30 * time.Second, want: failed},
		{name: "server: garbage data lines", server: engineWith(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {not json\n\ndata: [DONE]\n\n")
		}, nil), scenario: externalYAML("  requests: 6", ""), bound: 30 * time.Second, want: failed, records: everyRecordFailed(client.ErrMalformedChunk)},
		{name: "server: connection closed mid-stream", server: engineWith(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}, nil), scenario: externalYAML("  requests: 6", ""), bound: 30 * time.Second, want: failed,
			records: func(t *testing.T, rs []client.Record) {
				for _, r := range rs {
					if r.OK() || len(r.Chunks) != 1 {
						t.Errorf("%s: %q with %d chunks: a cut stream fails and keeps what arrived", r.ID, r.ErrorClass, len(r.Chunks))
					}
				}
			}},
		{name: "server: a stream that never finishes", server: engineWith(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for r.Context().Err() == nil {
				fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
				w.(http.Flusher).Flush()
				time.Sleep(20 * time.Millisecond)
			}
		}, nil), scenario: externalYAML("  requests: 4\n  timeout: 500ms", ""), bound: 30 * time.Second, want: failed, records: everyRecordFailed(client.ErrTimeout)},
		{name: "server: an SSE line with no end", server: engineWith(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"")
			chunk := []byte(strings.Repeat("a", 64<<10))
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, nil), scenario: externalYAML("  requests: 2\n  timeout: 3s", ""), bound: 40 * time.Second, want: failed, cpu: true},
		{name: "server: /metrics is HTML", server: engineWith(goodChat, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>login</html>")
		}), scenario: externalYAML("  requests: 8", ""), bound: 30 * time.Second, want: completed, records: allOK, check: scrapeFailures(1)},
		{name: "server: /metrics is garbage", server: engineWith(goodChat, metricsText("this is { not an exposition\n")), scenario: externalYAML("  requests: 8", ""),
			bound: 30 * time.Second, want: completed, records: allOK, check: scrapeFailures(1)},
		{name: "server: /metrics 404", server: engineWith(goodChat, http.NotFound), scenario: externalYAML("  requests: 8", ""),
			bound: 30 * time.Second, want: completed, records: allOK, check: scrapeFailures(1)},
		{name: "server: /metrics hangs", server: engineWith(goodChat, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }),
			scenario: externalYAML("  requests: 8", ""), bound: 40 * time.Second, want: completed, records: allOK, check: scrapeFailures(1)},
		{name: "server: NaN and Inf in /metrics", server: engineWith(goodChat, metricsText(
			"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} NaN\n# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{model_name=\"m\"} +Inf\n")),
			scenario: externalYAML("  requests: 8", ""), bound: 30 * time.Second, want: completed, records: allOK},
		{name: "server: negative counters", server: engineWith(goodChat, metricsText(
			"# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{model_name=\"m\"} -5\n")),
			scenario: externalYAML("  requests: 8", ""), bound: 30 * time.Second, want: completed, records: allOK},
		{name: "server: empty /metrics", server: engineWith(goodChat, metricsText("")), scenario: externalYAML("  requests: 8", ""),
			bound: 30 * time.Second, want: completed, records: allOK},
		{name: "server: echoes the API key in a 401", server: engineWith(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"error":{"message":"invalid key: %s"}}`, r.Header.Get("Authorization"))
		}, nil), scenario: externalYAML("  requests: 6", ""), bound: 30 * time.Second, want: failed, records: everyRecordFailed(client.ErrHTTPStatus)},
		{name: "secrets in the engine's URLs, from ${VAR}", server: engineWith(goodChat, nil), scenario: func(srv string) string {
			u := strings.Replace(srv, "http://", "http://bench:${FAULT_KEY}@", 1)
			return fmt.Sprintf(`
name: fault
model: m
engine: {kind: external, base_url: "%s/v1", metrics_url: "%s/metrics?token=${FAULT_KEY}"}
workload: {concurrency: 2, requests: 6, prompt_tokens: 8, output_tokens: 4}
scrape: {interval: 300ms, timeout: 250ms}
`, u, srv)
		}, bound: 30 * time.Second, want: completed, records: allOK},
		// llama.cpp's --api-key guards every route but /health and
		// /models, its /metrics included: the run sends the engine's key
		// there, never writes it, and sends it to no other origin.
		{name: "server: metrics guarded by the engine's API key (llama.cpp --api-key)", server: engineWith(goodChat, func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+faultSecret {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprint(w, `{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}`)
				return
			}
			metricsText("# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 0\n")(w, r)
		}), scenario: externalYAML("  requests: 6", ""), bound: 30 * time.Second, want: completed, records: allOK,
			check: func(t *testing.T, fr faultRun) {
				if h := fr.sum.Health; h.ScrapeOK < 2 || scrapesAnswered4xx(t, fr) != 0 {
					t.Errorf("%d scrapes OK, %d answered 4xx: want the guarded /metrics read with the key", h.ScrapeOK, scrapesAnswered4xx(t, fr))
				}
			}},
		{name: "server: metrics on another origin get no API key", server: engineWith(goodChat, func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "" {
				http.Error(w, "an API key reached another origin", http.StatusBadRequest)
				return
			}
			metricsText("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 0\n")(w, r)
		}), scenario: func(srv string) string {
			// 127.0.0.1 and localhost are two origins (RFC 6454), one server.
			other := strings.Replace(srv, "127.0.0.1", "localhost", 1) + "/metrics"
			return strings.Replace(externalYAML("  requests: 6", "")(srv), srv+"/metrics", other, 1)
		}, bound: 30 * time.Second, want: completed, records: allOK,
			check: func(t *testing.T, fr faultRun) {
				if h := fr.sum.Health; h.ScrapeOK < 2 || scrapesAnswered4xx(t, fr) != 0 {
					t.Errorf("%d scrapes OK, %d answered 4xx: the key went to another origin", h.ScrapeOK, scrapesAnswered4xx(t, fr))
				}
			}},
		// An engine that breaks connections as the run opens them (it
		// restarts meanwhile, or drops connections) is tried again: the run
		// goes on once it answered (TestWarmGoesOnOnceAnswered: saying how
		// many it left unopened); one that breaks every connection fails
		// the run (nothing answers).
		{name: "server: the first connections break as they open (an engine restarting)", server: breakModels(func(n int32) bool { return n <= 3 }),
			scenario: externalYAML("  requests: 6", ""), bound: 30 * time.Second, want: completed, records: allOK,
			check: func(t *testing.T, fr faultRun) {
				if m, err := rundir.ReadMeta(fr.dir); err != nil || slices.ContainsFunc(m.Engine.Notes, func(n string) bool { return strings.Contains(n, "connections before the run") }) {
					t.Errorf("notes %q (%v): every connection opened in the end, so none to note", m.Engine.Notes, err)
				}
			}},
		{name: "server: every connection breaks as it opens", server: breakModels(func(int32) bool { return true }),
			scenario: externalYAML("  requests: 6", ""), bound: 30 * time.Second, want: failed, errHas: "open connections to"},
		{name: "server: a model id with terminal escapes", server: func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/models" {
				fmt.Fprint(w, `{"object":"list","data":[{"id":"m\u001b]0;pwned\u0007\u001b[2J","object":"model"}]}`)
				return
			}
			engineWith(goodChat, nil)(w, r)
		}, scenario: func(srv string) string {
			return strings.Replace(externalYAML("  requests: 4", "")(srv), "model: m\n", "", 1)
		}, bound: 30 * time.Second, want: completed, records: allOK},
		{name: "server: /v1/models hangs, then a stop", server: func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/models" {
				<-r.Context().Done()
				return
			}
			http.NotFound(w, r)
		}, scenario: externalYAML("  requests: 6", ""), stopAt: 300 * time.Millisecond, bound: 15 * time.Second, want: interrupted},

		// Interrupts and abort conditions against the built-in engine.
		{name: "a first interrupt drains", scenario: simYAML("", "  duration: 30s"), stopAt: 700 * time.Millisecond, bound: 30 * time.Second, want: interrupted, records: allOK},
		{name: "a second interrupt aborts", scenario: simYAML("  sim: {decode_base: 20ms}", "  duration: 30s"), stopAt: 500 * time.Millisecond, abortAt: 800 * time.Millisecond,
			bound: 30 * time.Second, want: interrupted, records: func(t *testing.T, rs []client.Record) {
				for _, r := range rs {
					if !r.OK() && r.ErrorClass != client.ErrCanceled {
						t.Errorf("%s: %q", r.ID, r.ErrorClass)
					}
				}
			}},
		{name: "abort after 5 failures", scenario: simYAML("  faults: {error_rate: 0.5}", "  duration: 30s\n  abort: {errors: 5}"), bound: 30 * time.Second, want: failed, errHas: "abort.errors is 5",
			check: func(t *testing.T, fr faultRun) {
				if !strings.Contains(fr.sum.Run.Stopped, "abort") && fr.sum.Run.Stopped == "" {
					t.Errorf("stopped %q: want the abort named", fr.sum.Run.Stopped)
				}
			}},
		{name: "nothing listens at the engine's address", scenario: func(string) string {
			l, _ := net.Listen("tcp", "127.0.0.1:0")
			addr := l.Addr().String()
			l.Close()
			return externalYAML("  requests: 6", "")("http://" + addr)
		}, bound: 30 * time.Second, want: failed},

		// Scenarios that must be refused before anything is sent.
		{name: "scenario: broken YAML", scenario: func(string) string { return "name: x\nengine: {kind: sim\nworkload: {rate: 1}\n" }, bound: 5 * time.Second, want: refused, errHas: ":2: invalid YAML"},
		{name: "scenario: unknown key", scenario: func(string) string {
			return "name: x\nengine: {kind: sim}\nworkload: {concurency: 2, requests: 4}\n"
		}, bound: 5 * time.Second, want: refused, errHas: "unknown field"},
		{name: "scenario: a billion-token prompt", scenario: func(string) string {
			return "name: x\nengine: {kind: sim}\nworkload: {concurrency: 1, requests: 4, prompt_tokens: 1000000000}\n"
		}, bound: 5 * time.Second, want: refused, errHas: "beyond what a run can hold"},
		{name: "scenario: ten million users", scenario: func(string) string {
			return "name: x\nengine: {kind: sim}\nworkload: {concurrency: 10000000, requests: 4}\n"
		}, bound: 5 * time.Second, want: refused, errHas: "beyond what a run can hold"},
		{name: "scenario: a missing data file", scenario: simYAML("", "  requests: 4\n  dataset: {type: jsonl, path: /nonexistent/prompts.jsonl}"), bound: 5 * time.Second, want: refused, errHas: "prompts.jsonl"},
		{name: "scenario: an unknown dialect", scenario: func(string) string {
			return "name: x\nmodel: m\nengine: {kind: external, base_url: \"http://127.0.0.1:1/v1\", dialect: bogus}\nworkload: {concurrency: 1, requests: 1}\n"
		}, bound: 5 * time.Second, want: refused, errHas: "unknown dialect"},
		{name: "scenario: a gate that does not parse", scenario: simYAML("", "  requests: 4\ngates: {thresholds: [\"client.ttft.p99 < \"]}"), bound: 5 * time.Second, want: refused, errHas: "gates.thresholds[0]"},
		{name: "scenario: extra_body sets max_tokens", scenario: simYAML("", "  requests: 4\nrequest: {extra_body: {max_tokens: 3}}"), bound: 5 * time.Second, want: refused, errHas: "llmbench sets max_tokens itself"},
	}
}

func TestFaultMatrix(t *testing.T) {
	t.Parallel()
	quiet.Busy(t) // dozens of runs at once load the machine: the ground-truth test waits for them
	cases := faultCases()
	if len(cases) < 150 {
		t.Fatalf("the fault matrix has %d cases, want at least 150 (issue 21)", len(cases))
	}
	one := func(t *testing.T, tc faultCase) {
		fr := runFault(t, tc)
		if t.Failed() {
			t.Logf("stderr:\n%s", fr.stderr)
		}
		fr.skipIfUndecided(t)
	}
	// The cases wait, on their servers and on the run's own bounds (stall
	// and request timeouts, calibration's 10 s against a server that never
	// answers, the closing snapshot's 5 s settle against a /metrics that
	// fails or an engine that restarts, a launch's stop grace): the whole
	// matrix used 16 s of user and 7 s of system CPU in 176 s here, two
	// cases at a time as go test's -parallel (the cores) had them. So they
	// run side by side, waitingLanes at once, in this test's own slot (t.Run
	// from several goroutines: the subtests are not parallel, and -parallel
	// does not hold them to two); those that keep a core busy (faultCase.cpu)
	// then run as parallel subtests. Each case's time bound runs from its
	// own start, not from when a lane took it.
	var wg sync.WaitGroup
	lanes := make(chan struct{}, waitingLanes)
	for _, tc := range cases {
		if tc.heap > 0 || tc.cpu {
			continue
		}
		wg.Add(1)
		lanes <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-lanes }()
			t.Run(tc.name, func(t *testing.T) { one(t, tc) })
		}()
	}
	wg.Wait()
	for _, tc := range cases {
		if tc.heap > 0 || !tc.cpu {
			continue // TestFaultMemory, or run above
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			one(t, tc)
		})
	}
}

// waitingLanes is how many cases run at once in TestFaultMatrix's lanes:
// a case averaged 0.05 of a core (23 s of CPU over 464 s of cases, here
// beside other work), so eight use under half of one.
const waitingLanes = 8

// TestFaultMemory runs the cases that bound memory one at a time, while the
// package's parallel tests wait, sampling the heap as the run goes.
func TestFaultMemory(t *testing.T) {
	for _, tc := range faultCases() {
		if tc.heap == 0 {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			runtime.GC()
			base := heapBytes()
			peak := base
			done := make(chan struct{})
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				tick := time.NewTicker(2 * time.Millisecond)
				defer tick.Stop()
				for {
					if h := heapBytes(); h > peak {
						peak = h
					}
					select {
					case <-done:
						return
					case <-tick.C:
					}
				}
			}()
			fr := runFault(t, tc)
			close(done)
			<-sampled
			if grew := peak - min(base, peak); grew > tc.heap {
				t.Errorf("the heap grew by %d MiB during the run, more than its bound %d MiB", grew>>20, tc.heap>>20)
			}
			if t.Failed() {
				t.Logf("stderr:\n%s", fr.stderr)
			}
			fr.skipIfUndecided(t)
		})
	}
}

// heapBytes is the memory held by heap objects, live or not yet swept.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func runFault(t *testing.T, tc faultCase) (fr faultRun) {
	t.Helper()
	srvURL := ""
	if tc.server != nil {
		srv := httptest.NewServer(tc.server)
		t.Cleanup(srv.Close)
		srvURL = srv.URL
	}
	scenario := tc.scenario(srvURL)
	killCaseLeftovers(t, scenario)
	path := writeScenario(t, scenario)
	out, errb := &syncBuffer{}, &syncBuffer{}
	sys := IO{Stdout: out, Stderr: errb, Getenv: func(k string) string {
		if k == "FAULT_KEY" {
			return faultSecret
		}
		return ""
	}}
	ctx, cancel := context.WithTimeout(context.Background(), tc.bound+30*time.Second)
	defer cancel()
	stop := make(chan struct{})
	if tc.stopAt > 0 {
		time.AfterFunc(tc.stopAt, func() { close(stop) })
	}
	if tc.abortAt > 0 {
		time.AfterFunc(tc.abortAt, cancel)
	}
	neighbours := quiet.WatchNeighbours()
	began := time.Now()
	res, err := Run(ctx, Config{Scenario: path, RunsDir: t.TempDir(), Stop: stop}, sys)
	took := time.Since(began)
	fr = faultRun{dir: res.Dir, err: err, stdout: out.String(), stderr: errb.String(), sum: res.Summary, late: new([]string)}
	defer decideLate(t, &fr, neighbours)

	// The bound is on real time: an overrun while other processes took more
	// than quiet.BusyShare of the machine (beside .ci/busy-test's hogs and
	// other work, under -race, six cases took 33-75 s against bounds of
	// 30-40 s; four of them 2-12 s run alone without -race) leaves it
	// undecided, said so; on a quiet machine, or where the
	// platform cannot say, it fails. A run that hangs still meets the
	// context's deadline (the bound and 30 s) and ends wrongly.
	if took > tc.bound {
		others, measured := neighbours.ShareBesidesChildren()
		if measured && others > quiet.BusyShare {
			fr.undecided = fmt.Sprintf("inconclusive: the run took %v, more than its bound %v, while other processes used %.0f%% of the machine (more than %.0f%%): the bound is decided on a quiet machine",
				took.Round(time.Millisecond), tc.bound, 100*others, 100*quiet.BusyShare)
			t.Log(fr.undecided)
		} else {
			t.Errorf("the run took %v, more than its bound %v (other processes used %.0f%% of the machine)", took, tc.bound, 100*others)
		}
	}
	var ce *ConfigError
	switch got := outcomeOf(err, &ce); {
	case got != tc.want:
		t.Fatalf("the run ended %s (%v), want %s", got, err, tc.want)
	case tc.errHas != "" && (err == nil || !strings.Contains(err.Error(), tc.errHas)):
		t.Errorf("error %v, want it to say %q", err, tc.errHas)
	}
	noSecret(t, fr)
	if tc.after != nil {
		tc.after(t, fr)
	}
	if tc.want == refused {
		if fr.dir != "" {
			t.Errorf("a refused scenario made a run directory %s", fr.dir)
		}
		return fr
	}
	if fr.dir == "" {
		t.Fatal("no run directory")
	}
	if _, err := os.Stat(filepath.Join(fr.dir, rundir.SummaryFile)); err != nil {
		if errors.Is(err, fs.ErrNotExist) && fr.sum.Client.Requests.Sent == 0 && tc.want != completed {
			return fr // stopped before anything was sent (warm-up)
		}
		t.Fatalf("no summary: %v", err)
	}
	fr.records = readJSONL[client.Record](t, filepath.Join(fr.dir, rundir.RequestsFile))
	seen := map[string]bool{}
	for _, r := range fr.records {
		if seen[r.ID] {
			t.Errorf("request %s has two records", r.ID)
		}
		seen[r.ID] = true
	}
	ok := 0
	for _, r := range fr.records {
		if r.OK() {
			ok++
		}
	}
	if s := fr.sum.Client.Requests; s.Sent != len(fr.records) || s.OK != ok {
		t.Errorf("summary requests %+v for %d records: every request sent has exactly one record, counted once", s, len(fr.records))
	}
	if tc.records != nil && len(fr.records) > 0 {
		tc.records(t, fr.records)
	}
	if tc.check != nil {
		tc.check(t, fr)
	}
	return fr
}

// decideLate decides the real-time misses the case's checks found
// (faultRun.timed), once they ran: undecided while other processes used more
// than quiet.BusyShare of the machine during the run and its checks, failed
// otherwise.
func decideLate(t *testing.T, fr *faultRun, neighbours *quiet.Neighbours) {
	t.Helper()
	if len(*fr.late) == 0 {
		return
	}
	others, measured := neighbours.ShareBesidesChildren()
	if measured && others > quiet.BusyShare {
		for _, m := range *fr.late {
			t.Logf("real-time bound missed: %s", m)
		}
		fr.undecided = strings.TrimPrefix(fr.undecided+"; ", "; ") + fmt.Sprintf(
			"inconclusive: %d real-time bound(s) missed while other processes used %.0f%% of the machine (more than %.0f%%): they are decided on a quiet machine",
			len(*fr.late), 100*others, 100*quiet.BusyShare)
		t.Log(fr.undecided)
		return
	}
	for _, m := range *fr.late {
		t.Errorf("%s (other processes used %.0f%% of the machine)", m, 100*others)
	}
}

func outcomeOf(err error, ce **ConfigError) outcome {
	switch {
	case err == nil:
		return completed
	case errors.As(err, ce):
		return refused
	case errors.Is(err, ErrInterrupted):
		return interrupted
	}
	return failed
}

// noSecret checks every file of the run directory and the run's output, and
// that nothing printed carries a terminal escape sequence.
func noSecret(t *testing.T, fr faultRun) {
	t.Helper()
	if strings.Contains(fr.stdout, faultSecret) || strings.Contains(fr.stderr, faultSecret) {
		t.Errorf("the API key was printed")
	}
	if strings.ContainsAny(fr.stdout+fr.stderr, "\x1b\x07\u009b") {
		t.Errorf("a terminal control character was printed")
	}
	if fr.dir == "" {
		return
	}
	_ = filepath.WalkDir(fr.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), faultSecret) {
			t.Errorf("the API key is written in %s", filepath.Base(p))
		}
		return nil
	})
}
