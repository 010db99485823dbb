package reconcile

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

// gaugeConcepts are the gauges whose freshness is measured, in report order.
var gaugeConcepts = []scrape.Concept{
	scrape.RequestsRunning, scrape.RequestsWaiting, scrape.KVCacheUsage, scrape.GenThroughput, scrape.BatchSize,
}

// stuckAfter: a live gauge (refreshed every engine step) that read zero at
// this many scrapes taken while llmbench had requests in flight is dead:
// on a healthy engine the chance of sampling it empty at every one of them,
// while ours were inside, is negligible.
const stuckAfter = 10

// cadenceTolerance: a measured cadence within this fraction of the
// dialect's documented decode-log interval is called consistent with it.
// Prefill batches add updates under arrivals, so the measure reads low;
// 35 % keeps a steady closed loop inside and an every-step refresh out.
const cadenceTolerance = 0.35

// cadencePreference orders the gauges whose cadence is stated: one that is
// written only at decode logs first for logged gauges (SGLang's
// gen_throughput: every 40 decode steps, never at prefill), then gauges
// that move with every token over those that sit still under a steady load.
func cadencePreference(logged bool) []scrape.Concept {
	if logged {
		return []scrape.Concept{scrape.GenThroughput, scrape.KVCacheUsage, scrape.RequestsRunning, scrape.RequestsWaiting}
	}
	return []scrape.Concept{scrape.KVCacheUsage, scrape.RequestsRunning, scrape.GenThroughput, scrape.BatchSize, scrape.RequestsWaiting}
}

// gaugeStaleness measures each gauge's update cadence under load
// (scrape.MeasureCadence, with llmbench's own requests saying when the
// engine was busy and how many tokens it streamed), and what the gauges read
// once llmbench has nothing in flight. SGLang's scheduler gauges are written
// only at prefill batches and every decode_log_interval decode steps, so
// they lag and freeze at their last logged value: that is stated, as info.
// Other engines refresh every step, and a gauge that reads non-zero when
// idle, or zero throughout the load, is a warning.
func (a *analysis) gaugeStaleness() (f Finding, ok bool) {
	byTarget := map[string][]scrape.Row{}
	var targets []string
	for _, r := range a.gaugeRows {
		if !r.OK || r.Snapshot == nil || len(r.Snapshot.Gauges) == 0 {
			continue
		}
		if _, ok := byTarget[r.Target]; !ok {
			targets = append(targets, r.Target)
		}
		byTarget[r.Target] = append(byTarget[r.Target], r)
	}
	if len(targets) == 0 {
		return Finding{}, false
	}
	slices.Sort(targets)
	act := a.activity()
	// An abandoned request may still run inside the engine, so an idle
	// reading proves nothing once the client gave up on any.
	idleTrustworthy := a.noAbandoned()
	cadences := map[scrape.Concept]scrape.Cadence{}
	idle := map[scrape.Concept]float64{}
	var intervals []time.Duration
	var loaded, zeroLoaded int
	for _, t := range targets {
		rows := byTarget[t]
		slices.SortStableFunc(rows, func(x, y scrape.Row) int { return compareDur(x.At, y.At) })
		for i := 1; i < len(rows); i++ {
			intervals = append(intervals, rows[i].At-rows[i-1].At)
		}
		for _, c := range gaugeConcepts {
			cd := scrape.MeasureCadence(rows, c, act)
			if prev, ok := cadences[c]; !ok || cd.Busy > prev.Busy {
				cadences[c] = cd
			}
		}
		for _, r := range rows {
			if a.flight.at(r.At) > 0 && a.flight.at(r.At+r.Duration) > 0 && a.underLoad(r.At) {
				if v, ok := r.Snapshot.Gauges[scrape.RequestsRunning]; ok {
					loaded++
					if v == 0 {
						zeroLoaded++
					}
				}
			}
			if !idleTrustworthy || !a.flight.idle(r.At, r.At+r.Duration) {
				continue
			}
			for _, c := range []scrape.Concept{scrape.RequestsRunning, scrape.RequestsWaiting} {
				if v, ok := r.Snapshot.Gauges[c]; ok {
					idle[c] = v // the last idle reading wins
				}
			}
		}
	}

	ev := evidence{}
	scrapeEvery := median(intervals)
	ev.set("scrape_interval_s", scrapeEvery.Seconds())
	step, hasStep := a.stepTime()
	if hasStep {
		ev.set("engine_step_s", step)
	}
	for _, c := range gaugeConcepts {
		cd, ok := cadences[c]
		if !ok || cd.Busy == 0 {
			continue
		}
		ev.set(string(c)+"_busy_intervals", float64(cd.Busy))
		ev.set(string(c)+"_changes", float64(cd.Changes))
		if cd.Interval > 0 {
			ev.set(string(c)+"_update_interval_s", cd.Interval.Seconds())
		}
		if steps := a.stepsPerUpdate(cd, step, hasStep); steps > 0 && a.sem.LoggedGauges {
			ev.set(string(c)+"_steps_per_update", steps)
		}
	}
	var frozen []string
	for _, c := range []scrape.Concept{scrape.RequestsRunning, scrape.RequestsWaiting} {
		if v, ok := idle[c]; ok && v != 0 {
			ev.set(string(c)+"_idle_value", v)
			frozen = append(frozen, fmt.Sprintf("%s read %s", c, count(v)))
		}
	}
	if loaded > 0 {
		ev.set("loaded_scrapes", float64(loaded))
		ev.set("requests_running_zero_under_load", float64(zeroLoaded))
	}
	measured := a.cadenceClause(cadences, scrapeEvery, step, hasStep)

	f = Finding{ID: IDGaugeStaleness, Severity: Info}
	defer func() { f.Evidence = ev.orNil() }()
	idleClause := ""
	if len(frozen) > 0 {
		idleClause = strings.Join(frozen, " and ") + " with nothing of llmbench's in flight"
	}
	if a.sem.LoggedGauges {
		lead := fmt.Sprintf("%s writes its scheduler gauges only at each new prefill batch and every --decode-log-interval decode steps (default %d), so a scrape often re-reads an old value",
			a.sem.display, a.sem.DecodeLogInterval)
		inTime := ""
		if hasStep {
			every := float64(a.sem.DecodeLogInterval) * step
			ev.set("decode_log_interval_s", every)
			inTime = fmt.Sprintf("at this engine's %s per decode step, %d steps take %s", dur(step), a.sem.DecodeLogInterval, dur(every))
		}
		if idleClause != "" {
			idleClause += ": frozen at the last logged value once the load stopped"
		}
		f.Verdict = joinClauses(lead, inTime, measured, idleClause, "rely on its counters and histograms, not on these gauges, for anything precise")
		return f, true
	}
	var problems []string
	if loaded >= stuckAfter && zeroLoaded == loaded {
		problems = append(problems, fmt.Sprintf("requests_running read 0 at all %d scrapes taken while llmbench had requests in flight: the gauge is dead or counts something else", loaded))
	}
	if idleClause != "" {
		problems = append(problems, idleClause+": a drifting increment/decrement gauge, a dead process's last value, or other clients' requests")
	}
	if len(problems) > 0 {
		f.Severity = Warn
		f.Verdict = joinClauses(problems...)
		return f, true
	}
	f.Verdict = joinClauses("the gauges look live", measured)
	return f, true
}

// cadenceClause states the measured cadence of the most telling gauge: the
// first in cadencePreference that changed under load.
func (a *analysis) cadenceClause(cadences map[scrape.Concept]scrape.Cadence, scrapeEvery time.Duration, step float64, hasStep bool) string {
	for _, c := range cadencePreference(a.sem.LoggedGauges) {
		cd, ok := cadences[c]
		if !ok || cd.Changes == 0 {
			continue
		}
		if cd.AtMostScrape || float64(cd.Changes) >= resolvedShare*float64(cd.Busy) {
			return fmt.Sprintf("measured: %s changed in %d of %d intervals under load, so it may update faster than every %s, the scrape interval (scrape faster to resolve it)",
				c, cd.Changes, cd.Busy, dur(scrapeEvery.Seconds()))
		}
		clause := fmt.Sprintf("measured: %s changed in %d of %d intervals under load, about every %s", c, cd.Changes, cd.Busy, dur(cd.Interval.Seconds()))
		if !a.sem.LoggedGauges {
			// A gauge refreshed every step changes only when its value
			// does: a rare change is a steady load, not a slow gauge.
			if 2*cd.Changes < cd.Busy {
				clause += " (a steady load leaves a live gauge still)"
			}
			return clause
		}
		if steps := a.stepsPerUpdate(cd, step, hasStep); steps > 0 {
			clause += fmt.Sprintf(", ≈ %.0f decode steps", steps)
			if n := float64(a.sem.DecodeLogInterval); n > 0 && math.Abs(steps-n) <= cadenceTolerance*n {
				clause += fmt.Sprintf(": the %d-step decode-log cadence", a.sem.DecodeLogInterval)
			}
		}
		return clause
	}
	for _, c := range cadencePreference(a.sem.LoggedGauges) {
		if cd, ok := cadences[c]; ok && cd.Busy > 0 {
			return fmt.Sprintf("measured: no gauge changed over %d intervals under load (a steady value says nothing of its cadence)", cd.Busy)
		}
	}
	return ""
}

// resolvedShare: a gauge that changed in at least this share of the busy
// intervals may update faster than it is scraped, so its interval is only
// an upper bound and no step count is derived from it.
const resolvedShare = 0.8

// stepsPerUpdate converts a gauge's update interval into decode steps: by
// the engine's own step time when its ITL histogram gives it (one token per
// running request per step), else scrape's estimate from tokens over running
// requests, which SGLang's stale running gauge biases upwards.
func (a *analysis) stepsPerUpdate(cd scrape.Cadence, step float64, hasStep bool) float64 {
	if cd.Interval <= 0 {
		return 0
	}
	if hasStep && step > 0 {
		return cd.Interval.Seconds() / step
	}
	return cd.StepsPerUpdate
}

// activity tells scrape.MeasureCadence when the engine was busy with
// llmbench's requests and how many tokens they streamed, from the records:
// busy when any request was in flight during the interval, tokens those
// whose chunks arrived in it.
func (a *analysis) activity() scrape.Activity {
	// Token arrivals in chunkdigest.BinWidth bins: a bin counts at its
	// start, so an interval's tokens are read to within a bin at each end.
	arrivals := a.in.Digest.Of(nil).Arrivals
	var at []time.Duration
	cum := []float64{0} // cum[i] = tokens of the first i bins
	arrivals.Each(func(t time.Duration, tokens int64) {
		at = append(at, t)
		cum = append(cum, cum[len(cum)-1]+float64(tokens))
	})
	upTo := func(t time.Duration) float64 { // tokens arrived at or before t
		n, _ := slices.BinarySearch(at, t+1)
		return cum[n]
	}
	return func(from, to time.Duration) (bool, float64) {
		return a.flight.overlaps(from, to), upTo(to) - upTo(from)
	}
}

// stepTime estimates the engine's decode step from its ITL histogram: one
// token per step and request, so the mean inter-token interval is the step.
func (a *analysis) stepTime() (float64, bool) {
	if !a.paired() {
		return 0, false
	}
	h, ok := a.server.Histograms[scrape.ITL]
	if !ok || h.Count == 0 {
		return 0, false
	}
	return h.Sum / h.Count, true
}

// noAbandoned reports whether the client gave up on no request the engine
// might still be running.
func (a *analysis) noAbandoned() bool {
	for i := range a.in.Records {
		switch a.in.Records[i].ErrorClass {
		case client.ErrTimeout, client.ErrStalled, client.ErrCanceled, client.ErrStreamBroken, client.ErrMalformedChunk, client.ErrContentEncoding:
			return false
		}
	}
	return true
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// kvWarnUsage: KV usage at or above this leaves less than one typical
// request's worth of blocks on any engine sized for more than a few dozen
// concurrent requests; the scheduler is about to queue or preempt.
const kvWarnUsage = 0.95

// kvPressure reports the KV cache's peak usage under load and any
// preemptions (retractions on SGLang): a preempted request's latency
// includes recomputing its prefix.
func (a *analysis) kvPressure() (Finding, bool) {
	peak, seen := 0.0, false
	for _, r := range a.gaugeRows {
		if !r.OK || r.Snapshot == nil || !a.underLoad(r.At) {
			continue
		}
		if v, ok := r.Snapshot.Gauges[scrape.KVCacheUsage]; ok {
			peak, seen = max(peak, v), true
		}
	}
	pre, hasPre := 0.0, false
	if a.paired() && !a.reset(scrape.Preemptions) {
		pre, hasPre = a.server.Counters[scrape.Preemptions]
	}
	if !seen && !hasPre {
		return Finding{}, false
	}
	ev := evidence{}
	if seen {
		ev.set("kv_usage_peak_ratio", peak)
	}
	if hasPre {
		ev.set("preemptions_delta", pre)
	}
	f := Finding{ID: IDKVPressure, Severity: Info, Evidence: ev.orNil()}
	note := a.sem.KVNote
	peakClause := ""
	if seen {
		peakClause = fmt.Sprintf("KV cache usage peaked at %s", pct(peak))
	}
	switch {
	case pre > 0:
		f.Severity = Warn
		f.Verdict = joinClauses(fmt.Sprintf("the engine preempted %s requests because its KV cache ran out: their latencies include recomputing their prefix", count(pre)), peakClause, note)
	case seen && peak >= kvWarnUsage:
		f.Severity = Warn
		f.Verdict = joinClauses(fmt.Sprintf("KV cache usage reached %s: the engine is at the edge of queueing or preempting", pct(peak)), note)
	case hasPre:
		f.Verdict = joinClauses(peakClause, "no request was preempted", note)
	default:
		f.Verdict = joinClauses(peakClause, note)
	}
	return f, true
}

// underLoad reports whether t falls inside a measured window (or, when the
// run has none, anywhere).
func (a *analysis) underLoad(t time.Duration) bool {
	any := false
	for _, w := range a.in.Windows {
		if !w.Measured {
			continue
		}
		any = true
		if t >= w.Start && t <= w.End {
			return true
		}
	}
	return !any
}
