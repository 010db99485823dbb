package reconcile

import (
	"fmt"
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

// gaugeSeries is what was seen of one gauge.
type gaugeSeries struct {
	pairs, changes int           // consecutive scrape pairs under load, and those whose value differed
	span           time.Duration // time covered by those pairs
	idleValue      float64       // the value at the last scrape taken with nothing of ours in flight
	idleSeen       bool
}

// gaugeStaleness measures how often each gauge changes under load against
// how often llmbench's own in-flight count does, and what the gauges read
// once llmbench has nothing in flight. SGLang's scheduler gauges are written
// only at prefill batches and every decode_log_interval decode steps, so
// they lag and freeze at their last logged value: that is stated, as info.
// Other engines refresh every step, and a gauge that reads non-zero when
// idle, or zero throughout the load, is a warning.
func (a *analysis) gaugeStaleness() (Finding, bool) {
	series := map[scrape.Concept]*gaugeSeries{}
	get := func(c scrape.Concept) *gaugeSeries {
		s, ok := series[c]
		if !ok {
			s = &gaugeSeries{}
			series[c] = s
		}
		return s
	}
	byTarget := map[string][]scrape.Row{}
	var targets []string
	for _, r := range a.in.Rows {
		if !r.OK || r.Snapshot == nil {
			continue
		}
		if _, ok := byTarget[r.Target]; !ok {
			targets = append(targets, r.Target)
		}
		byTarget[r.Target] = append(byTarget[r.Target], r)
	}
	slices.Sort(targets)
	// An abandoned request may still run inside the engine, so an idle
	// reading proves nothing once the client gave up on any.
	idleTrustworthy := a.noAbandoned()
	var intervals []time.Duration
	var clientPairs, clientChanges, loaded, zeroLoaded int
	for _, t := range targets {
		rows := byTarget[t]
		slices.SortStableFunc(rows, func(x, y scrape.Row) int { return compareDur(x.At, y.At) })
		for i := 1; i < len(rows); i++ {
			intervals = append(intervals, rows[i].At-rows[i-1].At)
		}
		for _, w := range a.in.Windows {
			if !w.Measured {
				continue
			}
			var prev *scrape.Row
			for i := range rows {
				r := &rows[i]
				if r.At < w.Start || r.At > w.End {
					continue
				}
				if a.flight.at(r.At) > 0 && a.flight.at(r.At+r.Duration) > 0 {
					if v, ok := r.Snapshot.Gauges[scrape.RequestsRunning]; ok {
						loaded++
						if v == 0 {
							zeroLoaded++
						}
					}
				}
				if prev != nil {
					clientPairs++
					if a.flight.at(r.At) != a.flight.at(prev.At) {
						clientChanges++
					}
					for _, c := range gaugeConcepts {
						v, ok := r.Snapshot.Gauges[c]
						pv, pok := prev.Snapshot.Gauges[c]
						if !ok || !pok {
							continue
						}
						s := get(c)
						s.pairs++
						s.span += r.At - prev.At
						if v != pv {
							s.changes++
						}
					}
				}
				prev = r
			}
		}
		if !idleTrustworthy {
			continue
		}
		for _, r := range rows {
			if !a.flight.idle(r.At, r.At+r.Duration) {
				continue
			}
			for _, c := range []scrape.Concept{scrape.RequestsRunning, scrape.RequestsWaiting} {
				if v, ok := r.Snapshot.Gauges[c]; ok {
					s := get(c)
					s.idleValue, s.idleSeen = v, true
				}
			}
		}
	}
	if len(series) == 0 {
		return Finding{}, false
	}

	ev := evidence{}
	ev.set("scrape_interval_s", median(intervals).Seconds())
	if clientPairs > 0 {
		ev.set("client_inflight_change_ratio", float64(clientChanges)/float64(clientPairs))
	}
	step, hasStep := a.stepTime()
	if hasStep {
		ev.set("engine_step_s", step)
	}
	var measured, frozen []string
	for _, c := range gaugeConcepts {
		s, ok := series[c]
		if !ok {
			continue
		}
		if s.pairs > 0 {
			share := float64(s.changes) / float64(s.pairs)
			ev.set(string(c)+"_change_ratio", share)
			if s.changes > 0 {
				ev.set(string(c)+"_change_interval_s", s.span.Seconds()/float64(s.changes))
			}
			if c == scrape.RequestsRunning {
				clause := fmt.Sprintf("under load %s changed between %s of consecutive scrapes", c, pct(share))
				if clientPairs > 0 {
					clause += fmt.Sprintf(", llmbench's own in-flight count between %s", pct(float64(clientChanges)/float64(clientPairs)))
				}
				measured = append(measured, clause)
			}
		}
		if s.idleSeen && s.idleValue != 0 {
			ev.set(string(c)+"_idle_value", s.idleValue)
			frozen = append(frozen, fmt.Sprintf("%s read %s", c, count(s.idleValue)))
		}
	}
	if loaded > 0 {
		ev.set("loaded_scrapes", float64(loaded))
		ev.set("requests_running_zero_under_load", float64(zeroLoaded))
	}

	f := Finding{ID: IDGaugeStaleness, Severity: Info, Evidence: ev.orNil()}
	idle := ""
	if len(frozen) > 0 {
		idle = strings.Join(frozen, " and ") + " with nothing of llmbench's in flight"
	}
	if a.sem.loggedGauges {
		lead := fmt.Sprintf("%s writes its scheduler gauges only at each new prefill batch and every --decode-log-interval decode steps (default %d), so a scrape often re-reads an old value",
			engineName(a.sem.name), a.sem.decodeLogInterval)
		cadence := ""
		if hasStep {
			every := float64(a.sem.decodeLogInterval) * step
			ev.set("decode_log_interval_s", every)
			cadence = fmt.Sprintf("at this engine's %s per decode step, %d steps take %s", dur(step), a.sem.decodeLogInterval, dur(every))
		}
		if idle != "" {
			idle += ": frozen at the last logged value once the load stopped"
		}
		f.Verdict = joinClauses(lead, cadence, strings.Join(measured, ""), idle, "rely on its counters and histograms, not on these gauges, for anything precise")
		return f, true
	}
	var problems []string
	if loaded >= stuckAfter && zeroLoaded == loaded {
		problems = append(problems, fmt.Sprintf("requests_running read 0 at all %d scrapes taken while llmbench had requests in flight: the gauge is dead or counts something else", loaded))
	}
	if idle != "" {
		problems = append(problems, idle+": a drifting increment/decrement gauge, a dead process's last value, or other clients' requests")
	}
	if len(problems) > 0 {
		f.Severity = Warn
		f.Verdict = joinClauses(problems...)
		return f, true
	}
	f.Verdict = joinClauses("the gauges look live", strings.Join(measured, ""))
	return f, true
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
		case client.ErrTimeout, client.ErrCanceled, client.ErrStreamBroken, client.ErrMalformedChunk:
			return false
		}
	}
	return true
}

func engineName(dialect string) string {
	switch dialect {
	case "sglang":
		return "SGLang"
	case "vllm":
		return "vLLM"
	case "fastdeploy":
		return "FastDeploy"
	case "":
		return "the engine"
	}
	return dialect
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
	for _, r := range a.in.Rows {
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
	note := ""
	if a.sem.name == "sglang" {
		note = "SGLang counts evictable prefix-cache tokens as free"
	}
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
