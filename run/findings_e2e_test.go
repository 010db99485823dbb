package run

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/internal/testkit"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/scrape"
)

// These tests hold reconcile's findings to the built-in engine's ground
// truth (issue 20, item 4): each false finding a user met is reproduced
// here first, then fixed.

// TestForeignRequestsCountedExactly: where the engine counts requests
// (vLLM's request_success_total, SGLang's num_requests_total), foreign
// requests are counted exactly, even when some of ours reached the engine
// and failed (the engine aborted them: they are not finished). The issue
// met "about 27 requests" where 47 came: the count took every request of
// ours that reached the engine as one it finished.
func TestForeignRequestsCountedExactly(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{sim.DialectVLLM, sim.DialectSGLang} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			// A reset after the first token breaks about a quarter of our
			// streams: the engine aborts those requests.
			e, ep := startSim(t, sim.Config{Dialect: dialect, Faults: sim.Faults{Seed: 7, ResetRate: 0.25}})
			// The foreign client does not stream, so no reset strikes it.
			other, err := client.New(client.Config{BaseURL: ep.BaseURL, Model: ep.Model, Dialect: dialect, NoStream: true})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			// Every other measured request of ours, the hop first sends a
			// foreign one of its own and waits for it: each is inside the
			// measured window, so the engine's truth counts them exactly.
			var ours, foreign atomic.Int64
			hop := proxyTo(t, ep.BaseURL, func(w http.ResponseWriter, r *http.Request, next http.Handler) {
				if r.URL.Path == "/v1/chat/completions" && !strings.HasPrefix(r.Header.Get("X-Request-Id"), client.ProbeIDPrefix) {
					if ours.Add(1)%2 == 0 {
						n := foreign.Add(1)
						rec := other.Do(r.Context(), client.Request{ID: fmt.Sprintf("other-client-%d", n), MaxTokens: 8, IgnoreEOS: true,
							Messages: []client.Message{{Role: "user", Content: "somebody else is using this engine too"}}})
						if !rec.OK() {
							t.Errorf("foreign request %d: %s %s", n, rec.ErrorClass, rec.Error)
						}
					}
				}
				next.ServeHTTP(w, r)
			}, nil)
			dir := runQuick(t, externalScenario("foreign-exact", dialect, hop+"/v1", ep.MetricsURL, 40, 100*time.Millisecond))
			truthForeign, broken := 0, 0
			for _, rt := range e.Truth() {
				switch {
				case strings.HasPrefix(rt.ID, "other-client-"):
					truthForeign++
				case rt.Outcome == sim.OutcomeBroken:
					broken++
				}
			}
			if truthForeign != int(foreign.Load()) || broken == 0 {
				t.Fatalf("truth: %d foreign requests (the hop sent %d), %d of ours broken: the test's premise fails", truthForeign, foreign.Load(), broken)
			}
			in := reconcileInput(t, dir)
			f := wantFinding(t, reconcile.Reconcile(in), reconcile.IDForeignTraffic, reconcile.Warn, fmt.Sprintf("served %d requests llmbench did not send", truthForeign))
			if got := f.Evidence["foreign_requests"]; got != float64(truthForeign) {
				t.Errorf("foreign_requests %v, the engine's truth %d (%d of ours broken and aborted)", got, truthForeign, broken)
			}
			if _, est := f.Evidence["foreign_requests_estimated"]; est {
				t.Errorf("an engine that counts requests gave an estimate: %v", f.Evidence)
			}
		})
	}
}

// TestPrefillTimeOverTheEngineCount: llama.cpp adds a request's prompt time
// when its prefill pass ends, even if the client has gone by then (the
// cancel is handled between passes; the built-in engine does the same). The
// TTFT decomposition divided the engine's prefill time by the requests the
// client saw a first token of (issue 20: 536 where the engine prefilled
// 551), so requests that timed out in their prefill made the engine's mean
// too high and read as "it measured other requests". With no request
// counter, the count is the client's, bounded, and named so; the engine's
// truth lies inside the range, and nothing warns.
func TestPrefillTimeOverTheEngineCount(t *testing.T) {
	t.Parallel()
	// 100 µs per prompt token: a 1,000-token prompt takes 100 ms in one
	// pass, past the 80 ms timeout; a 16-token one 2 ms. One user, so each
	// prefill has its pass to itself.
	e, ep := testkit.StartSimWith(t, sim.Config{Dialect: sim.DialectLlamaCpp}, func(p *sim.Params) {
		p.PrefillPerToken = 100 * time.Microsecond
		p.MaxRunningRequests = 4
	})
	dir := runQuick(t, fmt.Sprintf(`
name: prefill-count
seed: 3
model: %s
engine: {kind: external, dialect: llamacpp, base_url: %s, metrics_url: %s}
workload:
  timeout: 80ms
  concurrency: 1
  requests: 24
  prompt_tokens: {dist: uniform, min: 16, max: 1000}
  output_tokens: 8
scrape: {interval: 100ms}
`, sim.DefaultModel, ep.BaseURL, ep.MetricsURL))
	in := reconcileInput(t, dir)
	seen := 0
	for _, r := range in.Records {
		if r.FirstToken > 0 {
			seen++
		}
	}
	prefilled, sum := 0, time.Duration(0)
	for _, rt := range e.Truth() {
		if rt.PrefillEnd > 0 && !strings.HasPrefix(rt.ID, client.ProbeIDPrefix) {
			prefilled++
			sum += rt.PrefillEnd - rt.PrefillStart
		}
	}
	if prefilled <= seen {
		t.Fatalf("truth: the engine prefilled %d requests, the client saw %d first tokens: the test's premise fails", prefilled, seen)
	}
	fs := reconcile.Reconcile(in)
	f := wantFinding(t, fs, reconcile.IDTTFTDecomposition, reconcile.Info, "per request")
	truthMean := sum.Seconds() / float64(prefilled)
	lo, hi := f.Evidence["server_prefill_mean_min_s"], f.Evidence["server_prefill_mean_max_s"]
	// The engine keeps whole milliseconds, truncated: up to 1 ms low.
	if !(lo-0.001 <= truthMean && truthMean <= hi+1e-9) {
		t.Errorf("engine prefill mean %.4f..%.4f s, the truth %.4f s over %d requests (the client saw %d first tokens)\n%s",
			lo, hi, truthMean, prefilled, seen, dumpFindings(fs))
	}
	if n := f.Evidence["client_prefilled_requests"]; n != float64(seen) {
		t.Errorf("client_prefilled_requests %v, want %d", n, seen)
	}
}

// TestMetricsDialectChangeIsAnEngineChange: /metrics changes from vLLM's
// names to SGLang's mid-run (another server took the port; the new one had
// counted 1,000 requests of its own). Issue 20 read the change as a delta,
// 1,000 foreign requests; it is a change of engine, named so, and no delta
// is taken across it: no foreign traffic, no request or token mismatch.
func TestMetricsDialectChangeIsAnEngineChange(t *testing.T) {
	t.Parallel()
	// The switch comes 1.2 s after the engine started, on its clock: the
	// test's premise is that the run's scrapes read both sides of it. A
	// host that held the run's start (dialect detection, calibration, the
	// opening snapshot) past the switch leaves the run nothing to find,
	// which says nothing about llmbench: that attempt is run again while
	// other processes took the machine, and fails on a quiet one
	// (quiet.Retry). What a run that saw both sides reports is checked
	// every time.
	quiet.Retry{Within: 3 * time.Minute, QuietMisses: 2}.Run(t, func(int) []string {
		e, ep := startSim(t, sim.Config{Dialect: sim.DialectVLLM, Faults: sim.Faults{
			DialectSwitchAfter: 1200 * time.Millisecond, DialectSwitchTo: sim.DialectSGLang, DialectSwitchPrior: 1000}})
		dir := runQuick(t, fmt.Sprintf(`
name: dialect-change
seed: 5
model: %s
engine: {kind: external, base_url: %s, metrics_url: %s}
workload:
  concurrency: 4
  duration: 2500ms
  prompt_tokens: 32
  output_tokens: 24
scrape: {interval: 200ms, timeout: 200ms}
`, sim.DefaultModel, ep.BaseURL, ep.MetricsURL))
		if _, ok := e.DialectSwitchedAt(); !ok {
			t.Fatal("truth: the engine's metrics never switched: the test's premise fails")
		}
		in := reconcileInput(t, dir)
		if sides := dialectsRead(in.Rows); !sides[sim.DialectVLLM] || !sides[sim.DialectSGLang] {
			return []string{fmt.Sprintf("the run's scrapes read only %v: the switch did not fall inside the run", slices.Sorted(maps.Keys(sides)))}
		}
		fs := reconcile.Reconcile(in)
		wantFinding(t, fs, reconcile.IDEngineChange, reconcile.Warn, "changed from vLLM's metrics to SGLang's")
		for _, f := range fs {
			// A scrape that timed out on a loaded machine is a true finding
			// about the scrape, not about the engine's truth.
			if f.ID == reconcile.IDScrapeFailures {
				continue
			}
			if f.Severity != reconcile.Info && f.ID != reconcile.IDEngineChange {
				t.Errorf("%s %s: %s (the truth: a change of engine, nothing else wrong)", f.ID, f.Severity, f.Verdict)
			}
			if v, ok := f.Evidence["foreign_requests"]; ok && v > 0 {
				t.Errorf("%s: %v foreign requests across a change of engine", f.ID, v)
			}
		}
		t.Log(dumpFindings(fs))
		return nil
	})
}

// dialectsRead is the set of dialects the successful scrapes read.
func dialectsRead(rows []scrape.Row) map[string]bool {
	out := map[string]bool{}
	for _, r := range rows {
		if r.OK && r.Snapshot != nil && r.Snapshot.Dialect != "" {
			out[r.Snapshot.Dialect] = true
		}
	}
	return out
}

// TestContextTruncationIsNotAnIgnoredIgnoreEOS: against llama.cpp with
// 512-token slots, a request whose prompt plus output fills its slot stops
// there (finish_reason "length", fewer tokens than max_tokens): the engine
// honoured ignore_eos and ran out of context. Issue 20 said "lengths were
// not enforced … the engine did not honour ignore_eos" for every such
// request. The built-in engine's context (max_model_len, per request as
// llama.cpp's per-slot n_ctx) truncates the same way, its truth saying so.
func TestContextTruncationIsNotAnIgnoredIgnoreEOS(t *testing.T) {
	t.Parallel()
	e, ep := testkit.StartSimWith(t, sim.Config{Dialect: sim.DialectLlamaCpp}, func(p *sim.Params) { p.MaxModelLen = 512 })
	dir := runQuick(t, fmt.Sprintf(`
name: context
seed: 3
model: %s
engine: {kind: external, dialect: llamacpp, base_url: %s, metrics_url: %s}
workload:
  concurrency: 4
  requests: 16
  prompt_tokens: {dist: uniform, min: 200, max: 480}
  output_tokens: 160
scrape: {interval: 100ms}
`, sim.DefaultModel, ep.BaseURL, ep.MetricsURL))
	truncated := 0
	for _, rt := range e.Truth() {
		if rt.Outcome == sim.OutcomeOK && rt.FinishReason == "length" && rt.OutputTokens < 160 && !strings.HasPrefix(rt.ID, client.ProbeIDPrefix) {
			if rt.PromptTokens+rt.OutputTokens != 512 {
				t.Errorf("truth: %s stopped at %d+%d tokens, not at its 512-token context", rt.ID, rt.PromptTokens, rt.OutputTokens)
			}
			truncated++
		}
	}
	if truncated == 0 {
		t.Fatal("truth: no request reached its context: the test's premise fails")
	}
	s, err := report.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := report.RenderText(&text, s); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "did not honour ignore_eos") || s.Client.Tokens.OutputShort != nil {
		t.Errorf("context truncation read as an ignored ignore_eos (the truth: %d requests stopped at the 512-token context):\n%s", truncated, text.String())
	}
	ct := s.Client.Tokens.ContextTruncated
	if ct == nil || ct.Requests != truncated || ct.ContextMin != 512 || ct.ContextMax != 512 || ct.EngineContext != 512 {
		t.Fatalf("context truncation %+v, want %d requests at 512 tokens, the engine's stated context (the truth)", ct, truncated)
	}
	if !strings.Contains(text.String(), "the 512 tokens per request the engine states") {
		t.Errorf("the summary does not name the engine's stated context:\n%s", text.String())
	}
	if !strings.Contains(text.String(), fmt.Sprintf("%d of 16 requests stopped at the engine's context", truncated)) {
		t.Errorf("the summary does not name the truncation:\n%s", text.String())
	}
}
