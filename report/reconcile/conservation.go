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
	default:
		names := make([]string, 0, len(a.unpaired))
		for _, w := range a.unpaired {
			names = append(names, w.Name)
		}
		why = fmt.Sprintf("no measured phase has both a before and an after snapshot (%s lack one): the engine's side of every comparison is missing",
			strings.Join(names, ", "))
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

// foreignExcess is how many requests the engine finished (or received)
// beyond every request of ours that could have been counted in the paired
// windows; ok is false when the engine has neither counter or one reset.
func (a *analysis) foreignExcess() (excess float64, ok bool) {
	bound := float64(a.client.reached + a.ambiguous)
	for _, c := range []scrape.Concept{scrape.RequestsFinished, scrape.RequestsReceived} {
		v, has := a.server.Counters[c]
		if !has || a.reset(c) {
			continue
		}
		ok = true
		excess = math.Max(excess, v-bound)
	}
	return excess, ok
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
	ok := float64(a.client.ok)
	diff := fin - ok
	ev.set("difference", diff)
	if a.reset(scrape.RequestsFinished) {
		f.Severity = Warn
		f.Verdict = fmt.Sprintf("the engine's finished-request counter went backwards inside the window (a restart): its Δ %s covers only the time since, against %s completed by the client",
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
	if !ok {
		f.Verdict = "the engine exposes no usable request counter (or it reset): foreign traffic cannot be ruled out"
		return f
	}
	ev.set("foreign_requests", math.Max(0, excess))
	if excess < 1 {
		f.Verdict = "no foreign traffic: the engine counted no request beyond those llmbench sent"
		return f
	}
	share := excess / math.Max(1, float64(a.client.reached))
	ev.set("foreign_share_ratio", share)
	f.Verdict = fmt.Sprintf("the engine served %s requests llmbench did not send (%s of ours): other clients share it, so its latency histograms, gauges and token counters include their traffic",
		count(excess), pct(share))
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
	if excess, _ := a.foreignExcess(); excess >= 1 {
		f.Verdict = "not comparable: the engine's token counters include foreign traffic (see foreign_traffic)"
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
	tol := func(v float64) float64 { return math.Max(0.5, 1e-3*v) + a.ambiguousTok + a.straddleTok }
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
		per := ""
		if a.client.ok > 0 {
			per = fmt.Sprintf(", %+.1f per request", d/float64(a.client.ok))
		}
		clauses = append(clauses, fmt.Sprintf("%s tokens differ: client usage %s, engine Δ %s (%+.0f%s)", what, count(cl), count(server), d, per))
		switch {
		case what == "prompt" && a.client.cached > 0 && math.Abs(server-(cl-a.client.cached)) <= tol(cl):
			explained = "the engine counts only computed prompt tokens, not prefix-cache hits"
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
		clauses = append(clauses, "the engine's counters and the usage it returns do not count the same tokens (a different tokenizer or chat template, or special tokens counted on one side only)")
	case explained != "":
		clauses = append(clauses, explained)
	}
	f.Verdict = joinClauses(clauses...)
	return f
}
