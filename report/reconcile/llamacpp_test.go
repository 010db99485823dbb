package reconcile

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

// TestLlamaCpp: an engine with no histograms and no request counter
// (llama.cpp) is reconciled through its token and time counters: foreign
// traffic from its generated tokens, the prompt cache from its prompt
// tokens, decode time per token and prefill time per request beside the
// client's, each at its severity with the numbers that prove it.
func TestLlamaCpp(t *testing.T) {
	t.Parallel()
	type check func(t *testing.T, f Finding)
	near := func(key string, want, tol float64) check {
		return func(t *testing.T, f Finding) {
			t.Helper()
			if got, ok := f.Evidence[key]; !ok || math.Abs(got-want) > tol {
				t.Errorf("evidence %s = %v (present %v), want %v ± %v", key, got, ok, want, tol)
			}
		}
	}
	lacks := func(s string) check {
		return func(t *testing.T, f Finding) {
			t.Helper()
			if strings.Contains(f.Verdict, s) {
				t.Errorf("verdict %q says %q", f.Verdict, s)
			}
		}
	}
	fail := func(n int, class client.ErrorClass) func(in *Input) {
		return func(in *Input) {
			for i := range in.Records {
				if i%100 < n {
					in.Records[i].ErrorClass, in.Records[i].Error = class, "broken"
				}
			}
		}
	}
	for _, tc := range []struct {
		name    string
		world   func(w *world)
		edit    func(in *Input)
		id      string
		sev     Severity
		verdict string
		checks  []check
	}{
		// 2. foreign traffic from the generated-token counter
		{name: "58 foreign requests inferred from tokens", world: func(w *world) { w.perUser, w.foreign = 100, 58 },
			id: IDForeignTraffic, sev: Warn, verdict: "about 58 requests at the client's mean of 16 tokens",
			checks: []check{near("foreign_output_tokens", 58*16, 0), near("foreign_requests_estimated", 58, 0),
				near("generation_excess_tokens", 58*16, 0), near("client_output_mean_tokens", 16, 0)}},
		{name: "foreign traffic is not a tokenizer mismatch", world: func(w *world) { w.perUser, w.foreign = 100, 58 },
			id: IDTokenConservation, sev: Info, verdict: "other clients' traffic rather than a tokenizer difference",
			checks: []check{lacks("do not count the same tokens")}},
		{name: "foreign traffic taints the concurrency comparison", world: func(w *world) { w.perUser, w.foreign = 100, 58 },
			id: IDConcurrency, sev: Info, verdict: "the engine's count includes foreign requests"},
		{name: "clean run: no foreign traffic", id: IDForeignTraffic, sev: Info, verdict: "no foreign traffic: the engine counts no requests, and the 1600 tokens it generated are the client's 1600",
			checks: []check{near("foreign_requests_estimated", 0, 0)}},
		{name: "one token more per request is a counting difference", edit: func(in *Input) {
			in.Windows[0].After = withCounter(in.Windows[0].After, scrape.GenerationTokens, 100)
		}, id: IDForeignTraffic, sev: Info, verdict: "exactly 1 more per request, which is a counting difference"},
		{name: "one token more per request warns as a mismatch", edit: func(in *Input) {
			in.Windows[0].After = withCounter(in.Windows[0].After, scrape.GenerationTokens, 100)
		}, id: IDTokenConservation, sev: Warn, verdict: "+1.0 per request); the engine's counters and the usage it returns do not count the same tokens (exactly 1 generated tokens more per request"},
		{name: "prompt tokens differ, generated agree: a mismatch", world: func(w *world) { w.promptSkew = 1 },
			id: IDTokenConservation, sev: Warn, verdict: "generation tokens agree (1600); the engine's counters and the usage it returns do not count the same tokens (the prompts differ while the generated tokens agree"},
		{name: "failed requests' tokens are not foreign", world: func(w *world) { w.perUser = 100 }, edit: func(in *Input) {
			for i := range in.Records {
				in.Records[i].MaxTokens = 16
			}
			// two streams broke after 4 tokens; the engine went on to max_tokens
			for _, i := range []int{5, 50} {
				in.Records[i].ErrorClass, in.Records[i].OutputTokens = client.ErrStreamBroken, 4
			}
		}, id: IDForeignTraffic, sev: Info, verdict: "no foreign traffic",
			checks: []check{near("failed_output_allowance_tokens", 32, 0)}},
		{name: "failed requests without max_tokens leave it open", edit: fail(2, client.ErrStreamBroken),
			id: IDForeignTraffic, sev: Info, verdict: "without max_tokens may have generated any number of tokens"},
		{name: "estimated output counts leave it open", edit: func(in *Input) { in.Records[3].TokenSource = client.TokensFromChunks },
			id: IDForeignTraffic, sev: Info, verdict: "estimated from chunks"},

		// the prompt cache
		{name: "prompt cache the usage reports", world: func(w *world) { w.cached, w.computedOnly = 30, true },
			id: IDTokenConservation, sev: Info, verdict: "only computed prompt tokens",
			checks: []check{near("client_cached_tokens", 3000, 0)}},
		{name: "prompt cache the usage does not report", world: func(w *world) { w.cached, w.computedOnly = 30, true },
			edit: func(in *Input) {
				for i := range in.Records {
					in.Records[i].CachedTokens = 0
				}
			}, id: IDTokenConservation, sev: Info, verdict: "the 3000-token deficit is its prompt cache at work, not a tokenizer difference",
			checks: []check{near("prompt_cache_tokens_inferred", 3000, 0), lacks("do not count the same tokens")}},

		// 1. the engine's own time
		{name: "decode time per token agrees", id: IDPerTokenLatency, sev: Info, verdict: "per-token latency agrees: engine decode time 4.69 ms per generated token",
			checks: []check{near("server_decode_per_token_s", 0.0046875, 1e-9), near("client_decode_per_token_s", 0.0046875, 1e-6),
				near("server_decode_tpot_s", 0.005, 1e-9), near("client_tpot_mean_s", 0.005, 0.0001),
				near("server_decode_truncation_max_s", 0.001*100/1600, 1e-12)}},
		{name: "slow reader against decode time", world: func(w *world) { w.readLag = 2 * time.Millisecond },
			id: IDPerTokenLatency, sev: Warn, verdict: "slower than the engine generates them"},
		{name: "decode counter above the client's", edit: func(in *Input) {
			in.Windows[0].After = withCounter(in.Windows[0].After, scrape.DecodeSeconds, 5)
		}, id: IDPerTokenLatency, sev: Warn, verdict: "is above what the client observed"},
		{name: "prefill split of the client's ttft", id: IDTTFTDecomposition, sev: Info,
			verdict: "engine prefill 10.0 ms per request (Δprefill_seconds over the 100 requests the client saw prefilled",
			checks: []check{near("server_prefill_mean_s", 0.010, 1e-9), near("server_time_resolution_s", 0.001, 0),
				near("outside_prefill_s", 0.0031, 0.0001), func(t *testing.T, f Finding) {
					if !strings.Contains(f.Verdict, "keeps each request's prefill time in whole milliseconds, truncated") {
						t.Errorf("verdict does not state the millisecond truncation: %q", f.Verdict)
					}
				}}},
		{name: "sub-millisecond remainders are truncated", world: func(w *world) { w.prefill = 2900 * time.Microsecond },
			id: IDTTFTDecomposition, sev: Info, verdict: "engine prefill 2.00 ms per request",
			checks: []check{near("server_prefill_seconds_delta", 0.2, 1e-9)}},
		{name: "prefill under a millisecond adds nothing", world: func(w *world) { w.prefill = 900 * time.Microsecond },
			id: IDTTFTDecomposition, sev: Info, verdict: "every one of these took less than 1.00 ms"},
		// 10 requests timed out before the client read their first token,
		// after the engine had prefilled them: the engine's 100 prefills
		// over the client's 90 would read 11.1 ms; the range reaches the
		// truth, 10 ms over 100, and no verdict is drawn from means over
		// different requests.
		{name: "prefills the client gave up on", edit: func(in *Input) {
			for i := range 10 {
				in.Records[i].ErrorClass, in.Records[i].FirstToken, in.Records[i].FirstContent = client.ErrTimeout, 0, 0
				in.Records[i].Chunks = nil
			}
		}, id: IDTTFTDecomposition, sev: Info, verdict: "or up to 100 with the 10 the client gave up on before a first token",
			checks: []check{near("server_prefill_mean_min_s", 0.010, 1e-9), near("server_prefill_mean_max_s", 1.0/90, 1e-9),
				near("client_prefilled_requests", 90, 0), near("client_abandoned_before_first_token", 10, 0)}},
		{name: "engine prefill above the client's ttft", edit: func(in *Input) {
			in.Windows[0].After = withCounter(in.Windows[0].After, scrape.PrefillSeconds, 5)
		}, id: IDTTFTDecomposition, sev: Warn, verdict: "exceeds the client's mean TTFT"},

		// 3. Little's law counts every request that occupied the engine
		{name: "37% failed requests still occupied the engine", edit: fail(37, client.ErrStreamBroken),
			id: IDConcurrency, sev: Info, verdict: "37 failed requests included for the time they were in flight",
			checks: []check{near("client_inflight_mean", 3.9, 0.15), near("server_gauge_inflight_mean", 3.9, 0.15),
				near("client_ok_inflight_mean", 0.63*3.9, 0.2), lacks("more requests than the client")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld("llamacpp")
			if tc.world != nil {
				tc.world(w)
			}
			in := w.input()
			if tc.edit != nil {
				tc.edit(&in)
			}
			fs := Reconcile(in)
			f := only(t, fs, tc.id)
			if f.Severity != tc.sev {
				t.Errorf("severity %s, want %s: %s", f.Severity, tc.sev, f.Verdict)
			}
			if !strings.Contains(f.Verdict, tc.verdict) {
				t.Errorf("verdict %q lacks %q", f.Verdict, tc.verdict)
			}
			for _, c := range tc.checks {
				c(t, f)
			}
			if t.Failed() {
				t.Logf("all findings:\n%s", dump(fs))
			}
		})
	}
}

// TestFailedRequestsInLittlesLaw: the client's in-flight mean counts the
// failed requests that occupied the engine, so 37 % failures no longer read
// as the engine holding more than the client sent; the e2e histogram is
// compared with the population it observed.
func TestFailedRequestsInLittlesLaw(t *testing.T) {
	t.Parallel()
	// FastDeploy: an engine that may finish the streams the client saw
	// break (vLLM and SGLang abort them: AbandonedNotFinished).
	w := newWorld("fastdeploy")
	in := w.input()
	for i := range in.Records {
		if i%100 < 37 {
			in.Records[i].ErrorClass = client.ErrStreamBroken
		}
	}
	f := only(t, Reconcile(in), IDConcurrency)
	if f.Severity != Info || !strings.Contains(f.Verdict, "they agree") {
		t.Errorf("%s: %s %v", f.Severity, f.Verdict, f.Evidence)
	}
	// The engine's e2e histogram observed all 100 (the world's engine
	// finished the broken streams): the comparison uses every request.
	if got, want := f.Evidence["client_inflight_mean"], f.Evidence["server_inflight_mean"]; math.Abs(got-want) > 0.1*want {
		t.Errorf("client %v vs engine %v in flight", got, want)
	}

	for _, tc := range []struct {
		n           float64
		ok, reached int
		want        bool
	}{
		{63, 63, 100, true},   // the histogram counted the successes
		{100, 63, 100, false}, // every request
		{70, 63, 100, true},
		{90, 63, 100, false},
		{100, 100, 100, false}, // no failure: the same
	} {
		if got := successesOnly(tc.n, tc.ok, tc.reached); got != tc.want {
			t.Errorf("successesOnly(%v, %d, %d) = %v, want %v", tc.n, tc.ok, tc.reached, got, tc.want)
		}
	}
}

// TestLlamaCppRealCapture reconciles a real llama-server's /metrics before
// and after three requests (README of the capture) with the client's
// records of them: the prompt counter's 45 against the usage's 84 is the
// prompt cache the usage reported (39 tokens), the 32 generated tokens are
// ours, and the time counters, whole milliseconds per request, agree with
// the engine's own timings once their truncation is allowed for.
func TestLlamaCppRealCapture(t *testing.T) {
	t.Parallel()
	row := func(name string, at time.Duration) *scrape.Row {
		body, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		fams, err := scrape.Parse(body, "text/plain; version=0.0.4")
		if err != nil {
			t.Fatal(err)
		}
		d, _ := scrape.DialectFor("llamacpp")
		s := d.Map(fams)
		return &scrape.Row{Target: target, At: at, Duration: time.Millisecond, OK: true, Snapshot: &s}
	}
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	// One request as the client saw it, from the server's own timings
	// (prompt_ms, predicted_ms): 0.4 ms before the prompt starts, 0.2 ms
	// from a token to the client.
	rec := func(sent time.Duration, prompt, output, cached int, promptMs, predictedMs float64, stream bool) client.Record {
		first := sent + ms(0.4+promptMs)
		last := first + ms(predictedMs)
		r := client.Record{Sent: sent, Wrote: sent, FirstToken: first + ms(0.2), End: last + ms(0.3),
			PromptTokens: prompt, OutputTokens: output, CachedTokens: cached, MaxTokens: output,
			TokenSource: client.TokensFromUsage, FinishReason: "length", Status: 200}
		if stream {
			for i := range output {
				r.Chunks = append(r.Chunks, client.Chunk{At: first + ms(0.2) + ms(predictedMs)*time.Duration(i)/time.Duration(output-1), Tokens: 1})
			}
		} else {
			r.FirstToken = r.End
		}
		return r
	}
	recs := []client.Record{
		rec(100*time.Millisecond, 39, 12, 0, 3.056, 3.937, true), // chat, streamed
		rec(200*time.Millisecond, 39, 12, 38, 0.296, 2.894, false),
		rec(300*time.Millisecond, 6, 8, 1, 0.422, 2.293, true), // completions, streamed
	}
	before, after := row("llamacpp_before.txt", 50*time.Millisecond), row("llamacpp_after.txt", 400*time.Millisecond)
	in := Input{Records: recs, Dialect: "llamacpp", Rows: []scrape.Row{*before, *after},
		Windows: []Window{{Name: "main", Measured: true, Start: 100 * time.Millisecond, End: 310 * time.Millisecond, Before: before, After: after}}}
	fs := Reconcile(in)
	if Worst(fs) != Info {
		t.Errorf("warnings on a clean real capture:\n%s", dump(fs))
	}
	for id, want := range map[string]string{
		IDForeignTraffic:    "the 32 tokens it generated are the client's 32",
		IDTokenConservation: "prompt tokens agree once the usage's 39 cached tokens are taken out (client usage 84, engine Δ 45): the engine counts only computed prompt tokens, not prefix-cache hits; generation tokens agree (32)",
		IDPerTokenLatency:   "per-token latency agrees: engine decode time 0.22 ms per generated token (Δdecode_seconds 7.00 ms / Δgeneration_tokens 32",
		IDTTFTDecomposition: "engine prefill 1.00 ms per request (Δprefill_seconds over the 3 requests",
	} {
		if f := only(t, fs, id); !strings.Contains(f.Verdict, want) {
			t.Errorf("%s: verdict %q lacks %q", id, f.Verdict, want)
		}
	}
	// The client's decode time per token, (3.937 + 2.293 ms) / 20 tokens,
	// is above the engine's 7 ms / 32 only by what truncating three
	// requests' times to whole milliseconds can hide (3 ms / 32).
	f := only(t, fs, IDPerTokenLatency)
	if got := f.Evidence["client_decode_per_token_s"]; math.Abs(got-0.0003115) > 1e-6 {
		t.Errorf("client decode per token %v", got)
	}
	if got := f.Evidence["server_decode_truncation_max_s"]; math.Abs(got-0.003/32) > 1e-12 {
		t.Errorf("truncation bound %v", got)
	}
	if d := f.Evidence["difference_s"]; d != 0 {
		t.Errorf("difference %v beyond the truncation", d)
	}
}
