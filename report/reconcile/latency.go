package reconcile

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/quantile"
	"github.com/llmbench-org/llmbench/scrape"
)

// Thresholds of the TTFT decomposition (decision 0600).
const (
	// outsideWarnAbs and outsideWarnShare: time outside the engine is worth a
	// warning when it is both large in absolute terms and a large share of
	// what users wait for. On loopback the client's own path (HTTP, SSE
	// parsing, one flush) costs well under 2 ms even on a loaded 2-core
	// machine (the ground-truth test holds client TTFT within 2 ms of the
	// engine's flush), so 10 ms is five times that; 25 % means the engine is
	// no longer where most of the first-token time goes.
	outsideWarnAbs   = 0.010
	outsideWarnShare = 0.25
	// negativeOutsideWarn: the engine's TTFT ends before the client's does,
	// so a negative gap beyond rounding means the two are not measuring the
	// same requests (foreign traffic is handled apart) or not the same span.
	negativeOutsideWarnAbs   = 0.002
	negativeOutsideWarnShare = 0.10
)

// ttftDecomposition splits the client's mean TTFT into the engine's own
// phases (queue, prefill, the rest of its TTFT) and the time outside it.
// Means, not quantiles: _sum/_count is exact whatever the buckets.
func (a *analysis) ttftDecomposition() (f Finding) {
	f = Finding{ID: IDTTFTDecomposition, Severity: Info}
	ev := evidence{}
	defer func() { f.Evidence = ev.orNil() }()
	cm, cok := a.client.ttftMean()
	if !cok {
		f.Verdict = "no request of the compared windows produced a first token, so there is nothing to decompose"
		return f
	}
	ev.set("client_ttft_mean_s", cm)
	ev.set("client_ttft_count", float64(a.client.ttftN))
	h, has := a.server.Histograms[scrape.TTFT]
	if !has || h.Count == 0 {
		if ps, ok := a.server.Counters[scrape.PrefillSeconds]; ok && !a.reset(scrape.PrefillSeconds) && a.client.prefilled > 0 {
			return a.prefillDecomposition(f, ev, cm, ps)
		}
		f.Verdict = fmt.Sprintf("the engine exposes no TTFT histogram: the client's mean TTFT %s cannot be split into engine and outside time", dur(cm))
		return f
	}
	sm := h.Sum / h.Count
	outside := cm - sm
	ev.set("server_ttft_mean_s", sm)
	ev.set("server_ttft_count", h.Count)
	ev.set("outside_engine_s", outside)
	ev.set("outside_share_ratio", outside/cm)

	var parts []string
	inner := 0.0
	haveInner := false
	for _, p := range []struct {
		c    scrape.Concept
		name string
	}{{scrape.Queue, "queue"}, {scrape.Prefill, "prefill"}} {
		ph, ok := a.server.Histograms[p.c]
		if !ok || ph.Count == 0 {
			continue
		}
		m := ph.Sum / ph.Count
		ev.set("server_"+p.name+"_mean_s", m)
		parts = append(parts, fmt.Sprintf("%s %s", p.name, dur(m)))
		inner += m
		haveInner = true
	}
	caveat := ""
	if haveInner {
		other := sm - inner
		ev.set("engine_other_s", other)
		parts = append(parts, fmt.Sprintf("other %s", dur(other)))
		if other < -math.Max(0.001, 0.1*sm) {
			caveat = "the engine's phases add up to more than its TTFT: its TTFT starts after the queue (older FastDeploy) or its phases run on another clock"
		}
	}
	engine := fmt.Sprintf("engine %s", dur(sm))
	if len(parts) > 0 {
		engine += " (" + strings.Join(parts, ", ") + ")"
	}
	// Each engine mean is its histogram's sum over its own count delta
	// (server_ttft_count in the evidence), never over the client's count.
	f.Verdict = fmt.Sprintf("client TTFT %s = %s %s outside the engine (%s); the engine's TTFT is %s",
		dur(cm), engine, signedDur(outside), a.sem.OutsideTTFT, a.sem.TTFTSpan)
	if excess, _ := a.foreignExcess(); excess >= 1 {
		f.Verdict = joinClauses(f.Verdict, "the engine's mean includes foreign requests, so the split is approximate")
		return f
	}
	// When the engine's TTFTs and the client's are not the same requests
	// (a live window holds first tokens of requests the client has not
	// finished yet), the two means describe different populations: say so,
	// and draw no verdict from their difference.
	samePopulation := true
	if n := float64(a.client.ttftN); math.Abs(h.Count-n) > math.Max(1, 0.05*n)+float64(a.ambiguous) {
		samePopulation = false
		caveat = joinClauses(caveat, fmt.Sprintf("the engine observed %s first tokens against the client's %s, so the means cover different requests", count(h.Count), count(n)))
	}
	switch {
	case !samePopulation:
	case outside >= outsideWarnAbs && outside/cm >= outsideWarnShare:
		f.Severity = Warn
		f.Verdict = fmt.Sprintf("%s of the client's mean TTFT %s (%s) is spent outside the engine, which measures %s: look at the client host, the network and any proxy before tuning the engine",
			dur(outside), dur(cm), pct(outside/cm), dur(sm))
	case outside < -math.Max(negativeOutsideWarnAbs, negativeOutsideWarnShare*cm):
		f.Severity = Warn
		f.Verdict = fmt.Sprintf("the engine's mean TTFT %s exceeds the client's %s: the engine measures a different span or different requests", dur(sm), dur(cm))
	}
	f.Verdict = joinClauses(f.Verdict, caveat)
	return f
}

// Per-token latency agreement thresholds (decision 0600). The mean of a
// request's gaps is (last chunk − first chunk)/(gaps): a constant delivery
// delay cancels out, so a healthy client agrees with the engine to within
// scheduling jitter divided by the number of gaps, a few percent at most.
// 15 % and 0.5 ms keep sub-millisecond jitter on very fast engines from
// raising a warning while a reader that falls behind (each gap stretched
// by its own slowness) shows at once.
const (
	itlWarnRel = 0.15
	itlWarnAbs = 0.0005
)

// perTokenLatency compares the client's inter-token latency with the
// engine's, in the engine's own weighting (per token for SGLang, whose ITL
// histogram counts tokens; per chunk, i.e. per engine step, elsewhere).
func (a *analysis) perTokenLatency() (f Finding) {
	f = Finding{ID: IDPerTokenLatency, Severity: Info}
	ev := evidence{}
	defer func() { f.Evidence = ev.orNil() }()
	perToken := a.sem.ITLCountsTokens
	stepNote := ""
	if !perToken {
		// An engine that times every decode step of one token while its
		// stream groups several tokens a chunk (vLLM's --stream-interval,
		// the built-in engine's stream_interval) observes per token, not
		// per chunk; with speculative decoding a step is a chunk and stays one.
		if k, ok := a.tokensPerITLObservation(); ok && math.Abs(k-1) < 0.05 {
			if ct, ok := ratio(a.client.tokenGaps, float64(a.client.chunkGaps)); ok && ct > 1.05 {
				perToken = true
				stepNote = fmt.Sprintf("the engine times each decode step of one token (Δgeneration_tokens per ITL observation %.2f) while its stream carried %.2f tokens a chunk: compared per token", k, ct)
				ev.set("engine_tokens_per_itl_observation", k)
			}
		}
	}
	unit := "chunk"
	if perToken {
		unit = "token"
	}
	cm, cok := a.client.itlMean(perToken)
	if !cok {
		f.Verdict = "no request streamed two content chunks: there is no inter-token latency to compare"
		return f
	}
	ev.set("client_itl_mean_s", cm)
	if tm, ok := a.client.tpotMean(); ok {
		ev.set("client_tpot_mean_s", tm)
	}
	tpotClause := ""
	if th, ok := a.server.Histograms[scrape.TPOT]; ok && th.Count > 0 {
		ev.set("server_tpot_mean_s", th.Sum/th.Count)
		if tm, ok := a.client.tpotMean(); ok {
			tpotClause = fmt.Sprintf("TPOT: client %s, engine %s (first token excluded on both sides)", dur(tm), dur(th.Sum/th.Count))
		}
	}
	h, has := a.server.Histograms[scrape.ITL]
	if !has || h.Count == 0 {
		if ds, ok := a.server.Counters[scrape.DecodeSeconds]; ok && !a.reset(scrape.DecodeSeconds) && !a.reset(scrape.GenerationTokens) {
			if sg := a.server.Counters[scrape.GenerationTokens]; sg > 0 && a.client.gapOutput > 0 {
				return a.decodePerToken(f, ev, cm, unit, ds, sg)
			}
		}
		f.Verdict = joinClauses(fmt.Sprintf("the engine exposes no inter-token latency histogram: client ITL %s per %s is not compared", dur(cm), unit), tpotClause)
		return f
	}
	sm := h.Sum / h.Count
	diff := cm - sm
	rel := diff / sm
	ev.set("server_itl_mean_s", sm)
	ev.set("server_itl_count", h.Count)
	ev.set("difference_s", diff)
	ev.set("difference_ratio", rel)

	// The shapes, compared at the engine's bucket bounds: the client's
	// samples binned into the engine's buckets (quantiles are compared as
	// bucket containment, never as interpolated values).
	samples := a.client.itlSamples(perToken)
	if len(samples) > 0 {
		slices.Sort(samples)
		ev.set("cdf_max_distance", cdfDistance(h, scrape.Bin(h.Bounds, samples)))
		for _, q := range []float64{0.5, 0.99} {
			name := fmt.Sprintf("p%.0f", q*100)
			ev.set("client_itl_"+name+"_s", quantile.OfSorted(q, samples))
			e := h.Quantile(q)
			ev.set("server_itl_"+name+"_lower_s", e.Lower)
			ev.set("server_itl_"+name+"_upper_s", e.Upper)
		}
	}

	base := fmt.Sprintf("client ITL %s per %s, engine %s (%s)", dur(cm), unit, dur(sm), pct(rel))
	tpotClause = joinClauses(stepNote, tpotClause)
	if excess, _ := a.foreignExcess(); excess >= 1 {
		f.Verdict = joinClauses(base, "not compared: the engine's histogram includes foreign requests", tpotClause)
		return f
	}
	switch {
	case rel > itlWarnRel && diff > itlWarnAbs:
		f.Severity = Warn
		f.Verdict = joinClauses(fmt.Sprintf("the client receives tokens %s slower than the engine emits them (%s vs %s per %s): a client-side bottleneck (a slow reader, a saturated client CPU, a buffering proxy)",
			pct(rel), dur(cm), dur(sm), unit), tpotClause)
	case rel < -itlWarnRel && -diff > itlWarnAbs:
		f.Severity = Warn
		f.Verdict = joinClauses(fmt.Sprintf("the engine's ITL (%s per %s) is above what the client observed (%s): its histogram measures other requests or another span",
			dur(sm), unit, dur(cm)), tpotClause)
	default:
		f.Verdict = joinClauses("per-token latency agrees: "+base, tpotClause)
	}
	return f
}

// tokensPerITLObservation is how many tokens the engine generated per
// observation of its (per-step) ITL histogram: Δgeneration_tokens less one
// first token per request (the TTFT histogram's count), over the ITL count.
// 1 means one token per decode step; more, several (speculative decoding).
func (a *analysis) tokensPerITLObservation() (float64, bool) {
	h, ok := a.server.Histograms[scrape.ITL]
	t, tok := a.server.Histograms[scrape.TTFT]
	gen, gok := a.server.Counters[scrape.GenerationTokens]
	if !ok || !tok || !gok || h.Count <= 0 || a.reset(scrape.GenerationTokens) || gen <= t.Count {
		return 0, false
	}
	return (gen - t.Count) / h.Count, true
}

// prefillDecomposition splits the client's mean TTFT cm by the engine's
// cumulative prefill time ps (llama.cpp's prompt_seconds_total), for an
// engine without a TTFT histogram: its mean per request is ps over the
// requests it prefilled, and the rest of the client's TTFT lies outside the
// prefill (for llama.cpp: waiting for a free slot, tokenization, HTTP, the
// network). Each request's time is truncated to the dialect's resolution
// before it is added, so the mean reads low by up to that resolution.
//
// The engine counts no requests, so the count is the client's, and the
// verdict and evidence say so (client_prefilled_requests): the requests it
// saw a first token of, and, when it gave up on some before their first
// token, a range up to those too (the engine may have finished their
// prefill: issue 20 divided by the 536 the client saw where the engine
// prefilled 551, and read the high mean as other requests).
func (a *analysis) prefillDecomposition(f Finding, ev evidence, cm, ps float64) Finding {
	defer func() { f.Evidence = ev.orNil() }()
	n := float64(a.client.prefilled)
	k := float64(a.client.abandonedUnprefilled)
	who := fmt.Sprintf("the %s requests the client saw prefilled (the engine counts none)", count(n))
	ev.set("client_prefilled_requests", n)
	foreign, _ := a.foreignExcess()
	if foreign >= 1 {
		// other clients' requests were prefilled too: count them in, an
		// estimate (the engine counts no requests; see foreign_traffic)
		n += math.Round(foreign)
		who = fmt.Sprintf("the %s requests it prefilled, the client's %d and an estimated %s foreign ones", count(n), a.client.prefilled, count(math.Round(foreign)))
		ev.set("prefill_requests_estimated", n)
	}
	if k > 0 {
		ev.set("client_abandoned_before_first_token", k)
		who += fmt.Sprintf(", or up to %s with the %s the client gave up on before a first token, whose prefill the engine may have finished", count(n+k), count(k))
	}
	pm, pmLow := ps/n, ps/(n+k)
	outside := cm - pm
	res := a.sem.TimeResolution
	ev.set("server_prefill_seconds_delta", ps)
	ev.set("server_prefill_mean_s", pm)
	ev.set("server_prefill_mean_min_s", pmLow)
	ev.set("server_prefill_mean_max_s", pm)
	ev.set("outside_prefill_s", outside)
	ev.set("outside_share_ratio", outside/cm)
	kept := ""
	if res > 0 {
		ev.set("server_time_resolution_s", res)
		kept = fmt.Sprintf("; the engine keeps each request's prefill time in whole %s, truncated, so this mean may read up to %s low", resolutionUnit(res), dur(res))
		if ps == 0 {
			kept = fmt.Sprintf("; the engine keeps each request's prefill time in whole %s, truncated, and every one of these took less than %s", resolutionUnit(res), dur(res))
		}
	}
	perRequest := dur(pm)
	if k > 0 {
		perRequest = dur(pmLow) + " to " + dur(pm)
	}
	f.Verdict = fmt.Sprintf("client TTFT %s = engine prefill %s per request (Δ%s over %s: %s%s) %s outside the prefill (%s); the engine has no TTFT histogram",
		dur(cm), perRequest, scrape.PrefillSeconds, who, a.sem.PrefillSpan, kept, signedDur(outside), a.sem.OutsidePrefill)
	if foreign >= 1 {
		f.Verdict = joinClauses(f.Verdict, "the engine's prefill time includes foreign requests, so the split is approximate")
		return f
	}
	// The client's mean TTFT is over its successes; the engine's prefill
	// over every request it prefilled. When those differ (requests that
	// failed after their first token, or were given up on before it: the
	// long prompts, typically, that timed out in their prefill) the two
	// means describe different requests, and no verdict is drawn from
	// their difference.
	if other := a.client.prefilled + a.client.abandonedUnprefilled - a.client.ttftN; other > 0 {
		f.Verdict = joinClauses(f.Verdict, fmt.Sprintf("the engine's prefill time covers %d requests the client's mean TTFT does not (failed, or given up on before a first token), so the two means describe different requests", other))
		return f
	}
	// The engine's prefill ends before the client's first token arrives,
	// so its mean (truncation aside) above the client's TTFT means the two
	// do not describe the same requests.
	if pmLow-cm > math.Max(negativeOutsideWarnAbs, negativeOutsideWarnShare*cm) {
		f.Severity = Warn
		f.Verdict = fmt.Sprintf("the engine's prefill time per request %s exceeds the client's mean TTFT %s: it measured other requests (traffic the engine cannot tell apart, since it counts no requests) or another span",
			dur(pmLow), dur(cm))
	}
	return f
}

// decodePerToken compares the engine's own generation time per generated
// token, Δdecode_seconds / Δgeneration_tokens (llama.cpp's
// tokens_predicted_seconds_total / tokens_predicted_total), with the
// client's counterpart over the same span: each streamed request's first to
// last content chunk (a constant delivery delay cancels out) over its usage
// tokens. Both divide a request's n − 1 decode steps by its n tokens, so
// they compare like for like; the client's TPOT and ITL are stated beside
// them. Each request's time is truncated to the dialect's resolution before
// the engine adds it, so its figure reads low by up to that resolution per
// request over the tokens, and only a gap beyond it counts.
func (a *analysis) decodePerToken(f Finding, ev evidence, itl float64, unit string, ds, sg float64) Finding {
	defer func() { f.Evidence = ev.orNil() }()
	sp := ds / sg
	cp := a.client.gapSum / a.client.gapOutput
	// requests whose decode time the engine added: every one that reached it
	trunc := a.sem.TimeResolution * float64(a.client.reached) / sg
	ev.set("server_decode_seconds_delta", ds)
	ev.set("server_decode_per_token_s", sp)
	ev.set("client_decode_per_token_s", cp)
	if trunc > 0 {
		ev.set("server_decode_truncation_max_s", trunc)
	}
	// the distance from the client's figure to the interval the engine's
	// true figure lies in, [sp, sp + trunc]
	diff := 0.0
	switch {
	case cp > sp+trunc:
		diff = cp - (sp + trunc)
	case cp < sp:
		diff = cp - sp
	}
	rel := diff / sp
	ev.set("difference_s", diff)
	ev.set("difference_ratio", rel)

	refs := fmt.Sprintf("client ITL %s per %s", dur(itl), unit)
	if tm, ok := a.client.tpotMean(); ok {
		refs = fmt.Sprintf("client TPOT %s, ITL %s per %s", dur(tm), dur(itl), unit)
		// The engine's TPOT counterpart divides by the tokens after each
		// request's first, when the requests it counted are ours alone.
		if excess, _ := a.foreignExcess(); excess < 1 && a.client.failed == 0 && sg > float64(a.client.ok) {
			st := ds / (sg - float64(a.client.ok))
			ev.set("server_decode_tpot_s", st)
			refs = fmt.Sprintf("client TPOT %s against the engine's %s (its decode time over the tokens after each request's first), ITL %s per %s", dur(tm), dur(st), dur(itl), unit)
		}
	}
	kept := ""
	if a.sem.TimeResolution > 0 {
		kept = fmt.Sprintf("; the engine keeps each request's generation time in whole %s, truncated, so its figure may read up to %s low", resolutionUnit(a.sem.TimeResolution), dur(trunc))
	}
	base := fmt.Sprintf("engine decode time %s per generated token (Δ%s %s / Δ%s %s%s), client %s (first to last content chunk over the usage tokens)",
		dur(sp), scrape.DecodeSeconds, dur(ds), scrape.GenerationTokens, count(sg), kept, dur(cp))
	if excess, _ := a.foreignExcess(); excess >= 1 {
		f.Verdict = joinClauses(base, "not judged: the engine's counters include foreign requests", refs)
		return f
	}
	switch {
	case rel > itlWarnRel && diff > itlWarnAbs:
		f.Severity = Warn
		f.Verdict = joinClauses(fmt.Sprintf("the client receives tokens %s slower than the engine generates them (%s vs %s per token): a client-side bottleneck (a slow reader, a saturated client CPU, a buffering proxy)",
			pct(rel), dur(cp), dur(sp)), base, refs)
	case rel < -itlWarnRel && -diff > itlWarnAbs:
		f.Severity = Warn
		f.Verdict = joinClauses(fmt.Sprintf("the engine's decode time per token (%s) is above what the client observed (%s): its counters cover other requests or another span",
			dur(sp), dur(cp)), base, refs)
	default:
		f.Verdict = joinClauses("per-token latency agrees: "+base, refs)
	}
	return f
}

// resolutionUnit names a time resolution for a verdict.
func resolutionUnit(res float64) string {
	switch res {
	case 0.001:
		return "milliseconds"
	case 1e-6:
		return "microseconds"
	case 1:
		return "seconds"
	}
	return "steps of " + dur(res)
}

// cdfDistance is the largest gap between two histograms' CDFs over their
// common finite bounds (0 when either is empty).
func cdfDistance(a, b scrape.Histogram) float64 {
	ca, cb := a.CDF(), b.CDF()
	d := 0.0
	for i := range min(len(ca), len(cb)) {
		d = math.Max(d, math.Abs(ca[i]-cb[i]))
	}
	return d
}

// bucketCeilings says which server quantiles the buckets cannot resolve:
// those above the top finite bound (FastDeploy's TTFT buckets end at 1 s)
// are unknowable and only a lower limit can be stated; those where every
// observation sits in the first bucket (SGLang's TTFT starts at 0.1 s) say
// only "below the first bound".
func (a *analysis) bucketCeilings() (Finding, bool) {
	ev := evidence{}
	var above, coarse []string
	for _, c := range sortedConcepts(a.server.Histograms) {
		h := a.server.Histograms[c]
		if h.Count == 0 || len(h.Bounds) == 0 || len(h.Cumulative) != len(h.Bounds) {
			continue
		}
		top := h.Bounds[len(h.Bounds)-1]
		inf := h.Count - h.Cumulative[len(h.Cumulative)-1]
		ev.set(string(c)+"_top_bound_s", top)
		if inf > 0 {
			ev.set(string(c)+"_above_top_ratio", inf/h.Count)
		}
		var unknowable []string
		for _, q := range []float64{0.5, 0.9, 0.99} {
			if h.Quantile(q).AboveTop {
				unknowable = append(unknowable, fmt.Sprintf("p%.0f", q*100))
			}
		}
		if cs := a.clientSamplesFor(c); len(cs) > 0 {
			slices.Sort(cs)
			cp := quantile.OfSorted(0.99, cs)
			ev.set(string(c)+"_client_p99_s", cp)
			if cp > top && len(unknowable) == 0 {
				above = append(above, fmt.Sprintf("%s: the client's p99 %s is above the engine's top bucket %s", c, dur(cp), dur(top)))
			}
		}
		if len(unknowable) > 0 {
			above = append(above, fmt.Sprintf("%s %s > %s (%s of %s observations in +Inf: unknowable)",
				c, strings.Join(unknowable, "/"), dur(top), pct(inf/h.Count), count(h.Count)))
			continue
		}
		if first := h.Bounds[0]; h.Cumulative[0] >= h.Count && first > 0 {
			coarse = append(coarse, fmt.Sprintf("%s (all ≤ %s)", c, dur(first)))
		}
	}
	if len(ev) == 0 && len(a.mixedBounds) == 0 {
		return Finding{}, false
	}
	f := Finding{ID: IDBucketCeilings, Severity: Info, Evidence: ev.orNil()}
	switch {
	case len(above) > 0:
		f.Severity = Warn
		f.Verdict = "server quantiles above the top finite bucket are unknowable and are only lower limits: " + strings.Join(above, "; ")
	default:
		f.Verdict = "every server quantile falls within a finite bucket"
	}
	if len(coarse) > 0 {
		f.Verdict = joinClauses(f.Verdict, "every observation lies in the first bucket, so the engine's quantiles say only that much (compare means instead): "+strings.Join(coarse, ", "))
	}
	if len(a.mixedBounds) > 0 {
		names := make([]string, len(a.mixedBounds))
		for i, c := range a.mixedBounds {
			names[i] = string(c)
		}
		f.Verdict = joinClauses(f.Verdict, "left out of every comparison because their buckets changed between windows (the engine restarted with other buckets): "+strings.Join(names, ", "))
	}
	return f, true
}

// clientSamplesFor is the client's counterpart of a server histogram, when it has one.
func (a *analysis) clientSamplesFor(c scrape.Concept) []float64 {
	switch c {
	case scrape.TTFT:
		return a.client.samples((*client.Record).TTFT)
	case scrape.TPOT:
		return a.client.samples((*client.Record).TPOT)
	case scrape.E2E:
		return a.client.samples(func(r *client.Record) (time.Duration, bool) { return r.E2E(), true })
	case scrape.ITL:
		return a.client.itlSamples(a.sem.ITLCountsTokens)
	}
	return nil
}
