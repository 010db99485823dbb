package reconcile

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmbench-org/llmbench/scrape"
)

// noServerView says why no comparison with the engine could be made. It is
// info: a dead target has its own finding (scrape_dead), and an engine
// without /metrics is a legitimate setup.
func (a *analysis) noServerView() Finding {
	ev := evidence{}
	measured := 0
	for _, w := range a.in.Windows {
		if w.Measured {
			measured++
		}
	}
	ev.set("measured_windows", float64(measured))
	ev.set("windows_without_snapshots", float64(len(a.unpaired)))
	var why string
	switch {
	case len(a.in.Rows) == 0 && measured > 0 && len(a.unpaired) == measured && allNil(a.unpaired):
		why = "the engine has no /metrics to scrape: only the client's view is reported"
	case measured == 0:
		why = "no measured phase: nothing to compare"
	case len(a.acrossChange) == len(a.unpaired):
		why = fmt.Sprintf("no measured phase can be compared: the engine changed inside %s (see engine_change), so the engine's side of every comparison is missing",
			strings.Join(a.acrossChange, ", "))
	default:
		names := make([]string, 0, len(a.unpaired))
		for _, w := range a.unpaired {
			if !slices.Contains(a.acrossChange, w.Name) {
				names = append(names, w.Name)
			}
		}
		why = fmt.Sprintf("no measured phase has both a before and an after snapshot (%s lack one): the engine's side of every comparison is missing",
			strings.Join(names, ", "))
		if len(a.acrossChange) > 0 {
			why += fmt.Sprintf("; the engine changed inside %s (see engine_change)", strings.Join(a.acrossChange, ", "))
		}
	}
	return Finding{ID: IDServerView, Severity: Info, Verdict: why, Evidence: ev.orNil()}
}

func allNil(ws []Window) bool {
	for _, w := range ws {
		if w.Before != nil || w.After != nil {
			return false
		}
	}
	return true
}

// settleProblem says why a paired window's closing snapshot did not settle,
// "" when every one did (or none recorded it).
func (a *analysis) settleProblem() string {
	for _, pw := range a.windows {
		if st := pw.Settle; st != nil && !st.OK {
			if st.Reason != "" {
				return st.Reason
			}
			return fmt.Sprintf("%s of %s counted after %d polls", count(st.Finished), count(st.Want), st.Polls)
		}
	}
	return ""
}

func (a *analysis) reset(c scrape.Concept) bool { return slices.Contains(a.resets, c) }

// foreignExcess is how many requests of other clients the engine served in
// the paired windows: counted by its finished or received counter
// (requestExcess), or, for an engine that counts no requests (llama.cpp),
// estimated from its generated-token counter (tokenForeign); ok is false
// when neither can tell.
func (a *analysis) foreignExcess() (excess float64, ok bool) {
	if fc, ok := a.requestExcess(); ok {
		return fc.requests, true
	}
	if a.tokForeign.known {
		return a.tokForeign.requests, true
	}
	return 0, false
}

// foreignCount is the foreign requests an engine's request counter counts.
type foreignCount struct {
	requests float64        // beyond every request of ours the counter could have counted
	exact    bool           // exactly the foreign requests, not a lower bound
	counter  scrape.Concept // the counter that counted them
}

// requestExcess is how many requests the engine finished (or received)
// beyond every request of ours that could have been counted in the paired
// windows (the larger of the two counters' figures); ok is false when the
// engine has neither counter or one reset.
func (a *analysis) requestExcess() (fc foreignCount, ok bool) {
	for _, c := range []scrape.Concept{scrape.RequestsFinished, scrape.RequestsReceived} {
		v, has := a.server.Counters[c]
		if !has || a.reset(c) {
			continue
		}
		ours, exact := a.oursCountedBy(c)
		if e := math.Max(0, v-ours); !ok || e > fc.requests || (e == fc.requests && exact) {
			fc = foreignCount{requests: e, exact: exact, counter: c}
		}
		ok = true
	}
	return fc, ok
}

// oursCountedBy is how many of the window's requests of ours the engine's
// counter c may have counted, and whether that is exact rather than an
// upper bound. A received counter counts every request that reached the
// engine. A finished one counts our successes, and the failed requests that
// reached the engine may or may not be among them, unless the family says
// an abandoned request is never finished (engines.Reconcile's
// AbandonedNotFinished): then it counts exactly our successes (issue 20:
// "about 27 requests" where 47 came, 20 of ours having been aborted). The
// requests that ended as a snapshot was read may or may not be counted.
func (a *analysis) oursCountedBy(c scrape.Concept) (ours float64, exact bool) {
	amb := float64(a.ambiguous)
	if c == scrape.RequestsFinished && a.sem.AbandonedNotFinished {
		return float64(a.client.engineOK) + amb, a.ambiguous == 0
	}
	if c == scrape.RequestsFinished {
		return float64(a.client.engineReached) + amb, a.ambiguous == 0 && a.client.reached == a.client.ok
	}
	return float64(a.client.reached) + amb, a.ambiguous == 0
}

// requestConservation: every request the client completed should be one the
// engine counted as finished, no more, no fewer.
func (a *analysis) requestConservation() (f Finding) {
	f = Finding{ID: IDRequestConservation, Severity: Info}
	fin, has := a.server.Counters[scrape.RequestsFinished]
	ev := evidence{}
	defer func() { f.Evidence = ev.orNil() }()
	ev.set("client_sent", float64(a.client.sent))
	ev.set("client_ok", float64(a.client.ok))
	ev.set("client_failed", float64(a.client.failed))
	if v, ok := a.server.Counters[scrape.RequestsReceived]; ok {
		ev.set("server_received_delta", v)
	}
	if v, ok := a.server.Counters[scrape.RequestsAborted]; ok {
		ev.set("server_aborted_delta", v)
	}
	if a.ambiguous > 0 {
		ev.set("edge_ambiguous", float64(a.ambiguous))
	}
	if !has {
		f.Verdict = "the engine exposes no finished-request counter: requests cannot be conserved against it"
		return f
	}
	ev.set("server_finished_delta", fin)
	ok := float64(a.client.engineOK)
	if a.client.engineOK != a.client.ok {
		// Pooling requests: the engine counts one request per input.
		ev.set("client_ok_engine_requests", ok)
	}
	diff := fin - ok
	ev.set("difference", diff)
	if a.reset(scrape.RequestsFinished) {
		// The delta is increase()'s, counted from 0 after the reset: it
		// covers both sides of the restart, less what the engine counted
		// between the last scrape before it and the restart. Equal to the
		// client's count, nothing was lost and nothing is to warn of here
		// (counter_reset names the restart).
		if diff == 0 {
			f.Verdict = fmt.Sprintf("finished requests agree: %s on both sides, counted across the engine's restart (see counter_reset)", count(fin))
			return f
		}
		// Fewer, by no more than the client completed between the scrape
		// before the restart and the one that saw it: what the engine
		// counted there it lost when it restarted, so the gap is the
		// restart's (counter_reset warns of it), not a miscount.
		if lost := a.endedInRestartGaps(scrape.RequestsFinished); diff < 0 && -diff <= float64(lost+a.ambiguous) {
			ev.set("ended_in_restart_gap", float64(lost))
			f.Verdict = fmt.Sprintf("the engine's finished-request counter restarted inside the window: its Δ %s against %s completed by the client, the %s missing within the %d the client completed between the scrape before the restart and the one after it, which the restart erased (see counter_reset)",
				count(fin), count(ok), count(-diff), lost)
			return f
		}
		f.Severity = Warn
		f.Verdict = fmt.Sprintf("the engine's finished-request counter went backwards inside the window (a restart): counted from 0 after it, its Δ %s against %s completed by the client; what it counted between the scrape before the restart and the restart is not in the Δ (see counter_reset)",
			count(fin), count(ok))
		return f
	}
	excess, _ := a.foreignExcess()
	switch {
	case diff == 0:
		f.Verdict = fmt.Sprintf("finished requests agree: %s on both sides", count(fin))
	case diff > 0 && excess >= 1:
		f.Verdict = fmt.Sprintf("the engine finished %s requests, the client completed %s: the %s extra are other clients' (see foreign_traffic)",
			count(fin), count(ok), count(diff))
	case diff > 0 && diff <= float64(a.client.failed+a.ambiguous):
		f.Verdict = fmt.Sprintf("the engine finished %s requests, the client completed %s: the %s extra are among the %d the client saw fail or gave up on, which the engine still completed",
			count(fin), count(ok), count(diff), a.client.failed)
	case diff < 0 && -diff <= float64(a.ambiguous):
		f.Verdict = fmt.Sprintf("the engine finished %s requests, the client completed %s: the difference is within the %d requests that ended as a snapshot was read",
			count(fin), count(ok), a.ambiguous)
	case diff < 0:
		f.Severity = Warn
		why := "the closing snapshot came before the engine counted them, or the engine does not count some successes"
		if r := a.settleProblem(); r != "" {
			why = "the closing snapshot was taken before the engine settled (" + r + ")"
		}
		f.Verdict = fmt.Sprintf("the engine counted %s finished requests, %s fewer than the %s the client completed: %s",
			count(fin), count(-diff), count(ok), why)
	default:
		f.Severity = Warn
		f.Verdict = fmt.Sprintf("the engine counted %s finished requests, %s more than the %s the client completed, and they are not explained by failures or foreign traffic",
			count(fin), count(diff), count(ok))
	}
	return f
}

// foreignShareWarn is the share of foreign requests (relative to ours) from
// which the engine's latency figures are called contaminated. Below it (one
// health probe among hundreds of requests) the effect on means and
// quantiles is smaller than their own noise, and the finding stays info.
const foreignShareWarn = 0.01

// foreignTraffic: the engine saw more requests than llmbench sent, so every
// server-side latency, gauge and token figure includes other users.
func (a *analysis) foreignTraffic() (f Finding) {
	f = Finding{ID: IDForeignTraffic, Severity: Info}
	excess, ok := a.foreignExcess()
	ev := evidence{}
	defer func() { f.Evidence = ev.orNil() }()
	ev.set("client_reached_engine", float64(a.client.reached))
	if v, has := a.server.Counters[scrape.RequestsFinished]; has {
		ev.set("server_finished_delta", v)
	}
	if v, has := a.server.Counters[scrape.RequestsReceived]; has {
		ev.set("server_received_delta", v)
	}
	fc, counted := a.requestExcess()
	if !counted {
		if a.tokForeign.known || a.tokForeign.why != "" {
			return a.foreignFromTokens(f, ev)
		}
	}
	if !ok {
		f.Verdict = "the engine exposes no usable request counter (or it reset): foreign traffic cannot be ruled out"
		return f
	}
	// An exact count is named foreign_requests; a lower bound (the engine
	// may have finished some of ours the client saw fail) foreign_requests_min.
	counter := counterWords(fc.counter)
	requestsKey, shareKey, atLeast, bound := "foreign_requests", "foreign_share_ratio", "", ""
	if !fc.exact {
		requestsKey, shareKey, atLeast = "foreign_requests_min", "foreign_share_min_ratio", "at least "
		bound = fmt.Sprintf("; a lower bound: its %s counter may also count some of the %d requests of ours that failed after reaching it", counter, a.client.reached-a.client.ok)
		if a.ambiguous > 0 {
			bound = fmt.Sprintf("; a lower bound: its %s counter may or may not count the %d requests of ours that ended as a snapshot was read", counter, a.ambiguous)
		}
	}
	ev.set(requestsKey, excess)
	if excess < 1 {
		f.Verdict = "no foreign traffic: the engine counted no request beyond those llmbench sent"
		return f
	}
	share := excess / math.Max(1, float64(a.client.engineReached))
	ev.set(shareKey, share)
	f.Verdict = fmt.Sprintf("the engine served %s%s requests llmbench did not send (%s of ours, counted by its %s counter%s): other clients share it, so its latency histograms, gauges and token counters include their traffic",
		atLeast, count(excess), pct(share), counter, bound)
	if share >= foreignShareWarn {
		f.Severity = Warn
	}
	return f
}

// counterWords names a request counter in a verdict.
func counterWords(c scrape.Concept) string {
	if c == scrape.RequestsReceived {
		return "received-request"
	}
	return "finished-request"
}

// maxCountingPerRequest is the largest whole number of tokens per request
// by which an engine's generated-token counter may exceed the usage it
// returns because the two count differently (an end-of-sequence token
// counted on one side only), rather than because of other clients' traffic.
const maxCountingPerRequest = 2

// tokenForeign is other clients' traffic inferred from the generated-token
// counter, for an engine that counts no requests (llama.cpp). The usage an
// engine returns is its own count of the tokens it generated, so in a clean
// window the two agree exactly: an excess beyond what the window's edges
// and the failed requests may have generated is other clients' tokens,
// unless it is a whole number of tokens per request (a counting difference).
type tokenForeign struct {
	known bool   // the inference was made
	why   string // why it could not be, when the engine has the counter but the client's side cannot bound it

	excess     float64 // Δgeneration_tokens − the client's usage sum (may be ≤ 0)
	allowance  float64 // what edge and failed requests may account for
	tokens     float64 // the excess beyond the allowance: other clients' tokens (0 when none)
	requests   float64 // tokens ÷ the client's mean output length (at least 1 when tokens > 0)
	meanOutput float64 // the client's mean output tokens per successful request
	perRequest float64 // the excess is this many tokens per request exactly: a counting difference (0 when not)
}

// inferTokenForeign computes tokenForeign; only for an engine without a
// usable request counter.
func (a *analysis) inferTokenForeign() (tf tokenForeign) {
	if _, counted := a.requestExcess(); counted {
		return tf
	}
	sg, has := a.server.Counters[scrape.GenerationTokens]
	switch {
	case !has || a.client.ok == 0 || a.client.output <= 0:
		return tf
	case a.reset(scrape.GenerationTokens):
		tf.why = "its generated-token counter went backwards inside the window (a restart)"
		return tf
	case a.client.estimatedTokens > 0:
		tf.why = fmt.Sprintf("%d of the client's output counts were estimated from chunks, not taken from usage", a.client.estimatedTokens)
		return tf
	case a.client.failedUnbounded:
		tf.why = "failed requests without max_tokens may have generated any number of tokens the client never saw"
		return tf
	}
	cl := a.client.output
	tf.known = true
	tf.meanOutput = cl / float64(a.client.ok)
	tf.excess = sg - cl
	tol := a.tokenTolerance(cl)
	tf.allowance = tol + a.client.failedTokenBound
	if k := math.Round(tf.excess / float64(a.client.ok)); k >= 1 && k <= maxCountingPerRequest &&
		math.Abs(tf.excess-k*float64(a.client.ok)) <= tol {
		tf.perRequest = k
		return tf
	}
	// Beyond the allowance, the excess is foreign: all of it but what the
	// failed requests may have generated (the edges' tolerance absorbs
	// noise, it is not a loss to subtract).
	if tf.excess-tf.allowance >= 1 {
		tf.tokens = tf.excess - a.client.failedTokenBound
		tf.requests = math.Max(1, tf.tokens/tf.meanOutput)
	}
	return tf
}

// tokenTolerance is how far a token counter may stray from the client's sum
// cl in a clean window: requests that ended as a snapshot was read, float
// rounding on huge counters, and for an engine that counts as it works, the
// requests in flight at the edges.
func (a *analysis) tokenTolerance(cl float64) float64 {
	return math.Max(0.5, 1e-3*cl) + a.ambiguousTok + a.straddleTok
}

// foreignFromTokens is the foreign-traffic finding of an engine that counts
// no requests: what its generated-token counter says.
func (a *analysis) foreignFromTokens(f Finding, ev evidence) Finding {
	defer func() { f.Evidence = ev.orNil() }()
	tf := a.tokForeign
	sg := a.server.Counters[scrape.GenerationTokens]
	ev.set("server_generation_delta", sg)
	ev.set("client_output_tokens", a.client.output)
	if !tf.known {
		f.Verdict = "the engine counts no requests, and its generated tokens cannot tell other clients' traffic apart: " + tf.why + "; foreign traffic cannot be ruled out"
		return f
	}
	ev.set("client_output_mean_tokens", tf.meanOutput)
	ev.set("generation_excess_tokens", tf.excess)
	if a.client.failedTokenBound > 0 {
		ev.set("failed_output_allowance_tokens", a.client.failedTokenBound)
	}
	ev.set("foreign_output_tokens", tf.tokens)
	ev.set("foreign_requests_estimated", tf.requests)
	switch {
	case tf.perRequest > 0:
		f.Verdict = fmt.Sprintf("no foreign traffic inferred: the engine generated %s tokens against the client's usage of %s, exactly %s more per request, which is a counting difference, not other clients (see token_conservation)",
			count(sg), count(a.client.output), count(tf.perRequest))
		return f
	case tf.tokens < 1:
		f.Verdict = fmt.Sprintf("no foreign traffic: the engine counts no requests, and the %s tokens it generated are the client's %s", count(sg), count(a.client.output))
		if tf.excess >= 1 {
			f.Verdict += fmt.Sprintf(" plus %s that the requests at the window's edges or the %d failed ones account for", count(tf.excess), a.client.failed)
		}
		return f
	}
	// The tokens are counted; the requests are not (the engine counts
	// none), so their number and share are estimates, named so in the
	// verdict and the evidence: other clients' requests need not be as
	// long as ours (issue 20: "about 27" where 47 shorter ones came).
	share := tf.requests / math.Max(1, float64(a.client.reached))
	ev.set("foreign_share_estimated_ratio", share)
	atLeast := ""
	if a.client.failedTokenBound > 0 {
		atLeast = "at least "
	}
	f.Verdict = fmt.Sprintf("the engine generated %s%s tokens beyond the usage of llmbench's requests (its generated-token counter Δ %s, the client's usage %s): other clients' traffic; the engine counts no requests, so their number is an estimate: about %s requests at the client's mean of %s tokens (%s of ours), more if theirs are shorter; its gauges and token counters include them",
		atLeast, count(math.Round(tf.tokens)), count(sg), count(a.client.output), count(math.Round(tf.requests)), count(math.Round(tf.meanOutput)), pct(share))
	if share >= foreignShareWarn {
		f.Severity = Warn
	}
	return f
}

// tokenConservation: the engine's prompt and generation token counters
// should grow by exactly the usage the client was told, request by request.
func (a *analysis) tokenConservation() (f Finding) {
	f = Finding{ID: IDTokenConservation, Severity: Info}
	sp, hasP := a.server.Counters[scrape.PromptTokens]
	sg, hasG := a.server.Counters[scrape.GenerationTokens]
	ev := evidence{}
	defer func() { f.Evidence = ev.orNil() }()
	ev.set("client_prompt_tokens", a.client.prompt)
	ev.set("client_output_tokens", a.client.output)
	if a.straddleTok > 0 {
		// What the tolerance allows for requests in flight at the window's
		// edges, which an engine counting as it works has partly counted.
		ev.set("edge_in_flight_tokens", a.straddleTok)
	}
	if hasP {
		ev.set("server_prompt_delta", sp)
		ev.set("prompt_difference", sp-a.client.prompt)
	}
	if hasG {
		ev.set("server_generation_delta", sg)
		ev.set("generation_difference", sg-a.client.output)
	}
	if !hasP && !hasG {
		f.Verdict = "the engine exposes no token counters: tokens cannot be conserved against it"
		return f
	}
	if a.client.cached > 0 {
		ev.set("client_cached_tokens", a.client.cached)
	}
	if excess, _ := a.foreignExcess(); excess >= 1 {
		f.Verdict = "not comparable: the engine's token counters include foreign traffic (see foreign_traffic)"
		if tf := a.tokForeign; tf.tokens >= 1 {
			f.Verdict = fmt.Sprintf("not comparable: the engine generated %s tokens more than the client's usage, other clients' traffic rather than a tokenizer difference, since the usage is the engine's own count of what it generated (see foreign_traffic)",
				count(math.Round(tf.excess)))
		}
		return f
	}
	if a.reset(scrape.PromptTokens) || a.reset(scrape.GenerationTokens) {
		f.Verdict = "not comparable: a token counter went backwards inside the window (a restart), so its delta is partial"
		return f
	}

	// Both sides count the same tokens with the same tokenizer, so a clean
	// window balances exactly; the tolerance only absorbs requests that ended
	// as a snapshot was read, float rounding on huge counters, and for an
	// engine that counts as it works, the requests in flight at the edges.
	tol := a.tokenTolerance
	var clauses []string
	mismatch := false
	explained := ""
	check := func(what string, has bool, server, cl float64) {
		if !has {
			clauses = append(clauses, "the engine has no "+what+" counter")
			return
		}
		d := server - cl
		if math.Abs(d) <= tol(cl) {
			clauses = append(clauses, fmt.Sprintf("%s tokens agree (%s)", what, count(server)))
			return
		}
		if what == "prompt" && a.client.cached > 0 && math.Abs(server-(cl-a.client.cached)) <= tol(cl) {
			// Not a difference: the usage's cached tokens account for all of
			// it (llama.cpp, an engine that counts what it computed).
			clauses = append(clauses, fmt.Sprintf("prompt tokens agree once the usage's %s cached tokens are taken out (client usage %s, engine Δ %s): the engine counts only computed prompt tokens, not prefix-cache hits",
				count(a.client.cached), count(cl), count(server)))
			return
		}
		per := ""
		if a.client.ok > 0 {
			per = fmt.Sprintf(", %+.1f per request", d/float64(a.client.ok))
		}
		clauses = append(clauses, fmt.Sprintf("%s tokens differ: client usage %s, engine Δ %s (%+.0f%s)", what, count(cl), count(server), d, per))
		switch {
		case what == "prompt" && a.sem.PromptComputedOnly && d < 0 && a.client.cached == 0 && a.client.failed == 0:
			// llama.cpp counts only the prompt tokens it processed; the
			// client knows the cached ones only when the usage says.
			ev.set("prompt_cache_tokens_inferred", -d)
			explained = fmt.Sprintf("the engine counts only the prompt tokens it processed, so the %s-token deficit is its prompt cache at work, not a tokenizer difference (the usage reported no cached_tokens to check it against)", count(-d))
		case a.client.failed > 0:
			explained = fmt.Sprintf("%d requests failed, and engines count a failed request's tokens at different moments (vLLM at prefill and per step, SGLang only at finish)", a.client.failed)
		case what == "generation" && a.client.estimatedTokens > 0:
			explained = fmt.Sprintf("%d requests' output counts were estimated from chunks, not taken from usage", a.client.estimatedTokens)
		default:
			mismatch = true
		}
	}
	check("prompt", hasP, sp, a.client.prompt)
	check("generation", hasG, sg, a.client.output)
	switch {
	case mismatch:
		f.Severity = Warn
		why := "a different tokenizer or chat template, or special tokens counted on one side only"
		switch {
		case a.tokForeign.perRequest > 0:
			why = fmt.Sprintf("exactly %s generated tokens more per request: special tokens counted on one side only", count(a.tokForeign.perRequest))
		case hasP && hasG && math.Abs(sg-a.client.output) <= tol(a.client.output):
			why = "the prompts differ while the generated tokens agree: the chat template or special tokens around the prompt are counted on one side only"
		}
		clauses = append(clauses, "the engine's counters and the usage it returns do not count the same tokens ("+why+")")
	case explained != "":
		clauses = append(clauses, explained)
	}
	f.Verdict = joinClauses(clauses...)
	return f
}
