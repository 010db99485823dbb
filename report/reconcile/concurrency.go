package reconcile

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/llmbench-org/llmbench/scrape"
)

// Concurrency thresholds (decision 0600). By Little's law the mean number of
// requests in a system is the total time they spent in it divided by the
// window. The client's count includes the time outside the engine, which on
// a healthy path is a few percent of a request's life; a hidden queue
// between the two (a connection cap, a proxy) shows as the engine holding
// far fewer requests than the client has in flight. The warning needs both
// a relative gap (the engine holds under 75 % of the client's requests) and
// an absolute one (half a request on average), so a single-user run with
// a slow network does not trip it.
const (
	concurrencyWarnRatio = 0.75
	concurrencyWarnAbs   = 0.5
)

// concurrency compares the client's time-averaged in-flight requests with
// the engine's, by Little's law. The engine's side is, in this order:
//   - its e2e histogram: the sum of every finished request's time in it
//     (exact);
//   - for an engine whose prompt and generation time counters add up each
//     request's whole time in a slot (llama.cpp), their increase, plus the
//     time average of its waiting gauge for the requests queued for a slot:
//     exact but for the engine's rounding of each request's times;
//   - the time average of its running + waiting gauges (sampled, and stale
//     on SGLang, where they are not used).
//
// The gauges' average is reported beside the others as a cross-check.
//
// The client's count covers every request that occupied the engine, failed
// ones too for the time they were in flight (clientInflight): counting
// successes only made a run with 37 % failures read 2.3 requests in flight
// against the engine's 4.0, and blame the engine. An e2e histogram that
// observed only the successful requests is compared with the successes'
// count instead.
func (a *analysis) concurrency() (f Finding) {
	f = Finding{ID: IDConcurrency, Severity: Info}
	ev := evidence{}
	defer func() { f.Evidence = ev.orNil() }()
	T := a.span.Seconds()
	if T <= 0 || a.client.reached == 0 {
		f.Verdict = "no completed request in the compared windows: concurrency is not compared"
		return f
	}
	allL, okL := a.client.busySum/T, a.client.e2eSum/T
	clientL, who := allL, ""
	ev.set("window_s", T)
	ev.set("client_inflight_mean", allL)
	if failedIn := a.client.failed - (a.client.sent - a.client.reached); failedIn > 0 {
		ev.set("client_ok_inflight_mean", okL)
		who = fmt.Sprintf(" (%d failed requests included for the time they were in flight)", failedIn)
	}

	g := a.gaugeInflight()
	if g.samples > 0 {
		ev.set("server_gauge_inflight_mean", g.running+g.waiting)
		ev.set("server_gauge_samples", float64(g.samples))
	}
	// slack is how much more the engine may have held than its figure
	// says: what rounding each request's times down took from its counters.
	serverL, basis, slack := 0.0, "", 0.0
	byCounters := false
	if h, ok := a.server.Histograms[scrape.E2E]; ok && h.Count > 0 {
		serverL, basis = h.Sum/T, "its e2e histogram"
		ev.set("server_e2e_mean_s", h.Sum/h.Count)
		if successesOnly(h.Count, a.client.engineOK, a.client.engineReached) {
			clientL = okL
			who = fmt.Sprintf(" (its %d successful requests: the engine's e2e histogram counts %s, as many as succeeded)", a.client.ok, count(h.Count))
		}
	} else if busy, ok := a.slotSeconds(); ok {
		serverL, basis, byCounters = busy/T, "its prompt and generation time counters, each request's time in a slot", true
		ev.set("server_slot_inflight_mean", busy/T)
		if g.samples > 0 {
			serverL += g.waiting
			basis += ", plus the time average of its waiting gauge"
			ev.set("server_gauge_waiting_mean", g.waiting)
		}
		if res := a.sem.TimeResolution; res > 0 {
			// A request's prompt time and its generation time are each
			// rounded down, by less than res.
			slack = res * float64(a.client.prefilled+a.client.reached) / T
			ev.set("server_truncation_inflight_max", slack)
		}
	} else if g.samples > 0 && !a.sem.LoggedGauges {
		serverL, basis = g.running+g.waiting, "the time average of its running + waiting gauges"
	}
	if clientL <= 0 {
		f.Verdict = "the client's requests spent no measurable time in flight: concurrency is not compared"
		return f
	}
	if basis == "" {
		why := "the engine exposes neither an e2e histogram nor running/waiting gauges"
		if g.samples > 0 {
			why = fmt.Sprintf("the engine has no e2e histogram, and its gauges (mean %.1f) are written only every few decode steps, too stale to judge by", g.running+g.waiting)
		}
		f.Verdict = fmt.Sprintf("the client kept %.1f requests in flight on average%s; %s", clientL, who, why)
		return f
	}
	ev.set("server_inflight_mean", serverL)
	r := serverL / clientL
	ev.set("ratio", r)
	desc := fmt.Sprintf("the client kept %.1f requests in flight on average%s, the engine held %.1f (Little's law over %s)", clientL, who, serverL, basis)
	if excess, _ := a.foreignExcess(); excess >= 1 {
		f.Verdict = joinClauses(desc, "the engine's count includes foreign requests")
		return f
	}
	most, where := serverL+slack, "a connection cap in the client transport, a proxy or load-balancer queue, the network"
	if byCounters {
		// The counters start when a slot starts the prompt: the server's
		// own HTTP handling, chat template and tokenization come before.
		where += ", or the server's own HTTP handling and tokenization before a slot takes the request"
	}
	caveat := ""
	if byCounters && a.client.abandoned > 0 && clientL*float64(a.client.abandoned)/float64(a.client.reached) >= clientL-most {
		// The requests the client gave up on are enough to explain the
		// gap: the engine may have cancelled them, adding no generation time.
		caveat = fmt.Sprintf("; or the %d requests the client gave up on, if the engine cancelled them: it adds no generation time for a cancelled request", a.client.abandoned)
	}
	switch {
	case most/clientL < concurrencyWarnRatio && clientL-most >= concurrencyWarnAbs:
		f.Severity = Warn
		f.Verdict = fmt.Sprintf("%s: on average %.1f of the client's requests were not inside the engine but waiting between the two (%s)%s",
			desc, clientL-serverL, where, caveat)
	case r > 1/concurrencyWarnRatio && serverL-clientL >= concurrencyWarnAbs:
		f.Severity = Warn
		f.Verdict = desc + ": the engine held more requests than the client had in flight (requests the client abandoned still running, or other clients)"
	default:
		f.Verdict = desc + ": they agree"
	}
	return f
}

// successesOnly reports whether an engine histogram of n observations
// counted the client's ok successful requests rather than all the reached
// ones that occupied it (the engine observes a request's e2e when it
// finishes it; some never observe failed ones): the nearer count wins, a
// tie meaning they are the same.
func successesOnly(n float64, ok, reached int) bool {
	return reached > ok && math.Abs(n-float64(ok)) < math.Abs(n-float64(reached))
}

// slotSeconds is the increase over the paired windows of the prompt and
// generation time counters of an engine whose two counters add up each
// request's whole time in a slot (llama.cpp: prompt time from the slot
// starting the prompt to the first token, generation time from there to
// the last token, after which the slot is released): the sum Little's law
// wants for the requests it ran, as an e2e histogram's sum is, counted
// when the request gets its first token and when it ends. ok is false for
// other engines, or when a counter is missing or reset.
func (a *analysis) slotSeconds() (seconds float64, ok bool) {
	if !a.sem.SlotTimeCounters {
		return 0, false
	}
	p, okP := a.server.Counters[scrape.PrefillSeconds]
	d, okD := a.server.Counters[scrape.DecodeSeconds]
	if !okP || !okD || a.reset(scrape.PrefillSeconds) || a.reset(scrape.DecodeSeconds) {
		return 0, false
	}
	return p + d, true
}

// gaugeMean is the time average of an engine's running and waiting gauges
// over the paired windows, and how many scrapes it rests on.
type gaugeMean struct {
	running, waiting float64
	samples          int
}

// gaugeInflight averages the running and waiting gauges over time, from
// the scrapes read strictly inside each paired window: linearly between
// two scrapes, and each end of the window at the nearest scrape's value.
// The window's own snapshots are left out. The opening one is read the
// instant before the load begins (and, live, the probe a few milliseconds
// earlier), the closing one after the drain; a plain mean of the scrapes
// weighed each of those idle readings as much as a whole scrape interval
// of load: a 15-second llama.cpp run scraped every second read 3.7 of the
// client's 4.0 requests, and its live view 2.4 after four seconds, while
// the engine's truth held 3.9. Targets add up when the window's snapshots
// are a fleet's sum; windows count for their length.
func (a *analysis) gaugeInflight() gaugeMean {
	type reading struct {
		at            time.Duration
		running, wait float64
	}
	var run, wait, covered float64
	n := 0
	for _, pw := range a.windows {
		lo, hi := pw.Before.At, pw.After.At
		fleet := !slices.ContainsFunc(a.in.Rows, func(r scrape.Row) bool { return r.Target == pw.After.Target })
		per := map[string][]reading{}
		for _, row := range a.gaugeRows {
			if !row.OK || row.Snapshot == nil || row.At <= lo || row.At >= hi || (!fleet && row.Target != pw.After.Target) {
				continue
			}
			r, ok := row.Snapshot.Gauges[scrape.RequestsRunning]
			if !ok {
				continue
			}
			per[row.Target] = append(per[row.Target], reading{row.At, r, row.Snapshot.Gauges[scrape.RequestsWaiting]})
		}
		if len(per) == 0 {
			continue
		}
		secs := (hi - lo).Seconds()
		wn := 0
		for _, rs := range per {
			slices.SortFunc(rs, func(x, y reading) int { return compareDur(x.at, y.at) })
			first, last := rs[0], rs[len(rs)-1]
			tRun := first.running*(first.at-lo).Seconds() + last.running*(hi-last.at).Seconds()
			tWait := first.wait*(first.at-lo).Seconds() + last.wait*(hi-last.at).Seconds()
			for i := 1; i < len(rs); i++ {
				dt := (rs[i].at - rs[i-1].at).Seconds()
				tRun += (rs[i-1].running + rs[i].running) / 2 * dt
				tWait += (rs[i-1].wait + rs[i].wait) / 2 * dt
			}
			run, wait = run+tRun, wait+tWait
			wn = max(wn, len(rs))
		}
		covered, n = covered+secs, n+wn
	}
	if covered <= 0 {
		return gaugeMean{}
	}
	return gaugeMean{running: run / covered, waiting: wait / covered, samples: n}
}
