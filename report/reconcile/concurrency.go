package reconcile

import (
	"fmt"
	"math"

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
// the engine's, by Little's law over its e2e histogram (exact: a sum of
// times) and, as a cross-check, the time average of its running + waiting
// gauges (sampled, and stale on SGLang).
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

	serverL, basis := 0.0, ""
	if h, ok := a.server.Histograms[scrape.E2E]; ok && h.Count > 0 {
		serverL, basis = h.Sum/T, "its e2e histogram"
		ev.set("server_inflight_mean", serverL)
		if successesOnly(h.Count, a.client.ok, a.client.reached) {
			clientL = okL
			who = fmt.Sprintf(" (its %d successful requests: the engine's e2e histogram counts %s, as many as succeeded)", a.client.ok, count(h.Count))
		}
	}
	gaugeL, n := a.gaugeInflight()
	if n > 0 {
		ev.set("server_gauge_inflight_mean", gaugeL)
		ev.set("server_gauge_samples", float64(n))
		if basis == "" && !a.sem.loggedGauges {
			serverL, basis = gaugeL, "its running + waiting gauges"
		}
	}
	if clientL <= 0 {
		f.Verdict = "the client's requests spent no measurable time in flight: concurrency is not compared"
		return f
	}
	if basis == "" {
		why := "the engine exposes neither an e2e histogram nor running/waiting gauges"
		if n > 0 {
			why = fmt.Sprintf("the engine has no e2e histogram, and its gauges (mean %.1f) are written only every few decode steps, too stale to judge by", gaugeL)
		}
		f.Verdict = fmt.Sprintf("the client kept %.1f requests in flight on average%s; %s", clientL, who, why)
		return f
	}
	r := serverL / clientL
	ev.set("ratio", r)
	desc := fmt.Sprintf("the client kept %.1f requests in flight on average%s, the engine held %.1f (Little's law over %s)", clientL, who, serverL, basis)
	if excess, _ := a.foreignExcess(); excess >= 1 {
		f.Verdict = joinClauses(desc, "the engine's count includes foreign requests")
		return f
	}
	switch {
	case r < concurrencyWarnRatio && clientL-serverL >= concurrencyWarnAbs:
		f.Severity = Warn
		f.Verdict = fmt.Sprintf("%s: on average %.1f of the client's requests were not inside the engine but waiting between the two (a connection cap in the client transport, a proxy or load-balancer queue, the network)",
			desc, clientL-serverL)
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

// gaugeInflight is the time average of running + waiting over the
// successful scrapes taken while a paired window's phase ran: the mean over
// each target's scrapes, summed over the targets (all of them when the
// window's snapshots are a fleet's sum), and how many scrapes there were.
func (a *analysis) gaugeInflight() (mean float64, n int) {
	type acc struct {
		sum float64
		n   int
	}
	for _, pw := range a.windows {
		per := map[string]*acc{}
		fleet := true
		for _, row := range a.in.Rows {
			if row.Target == pw.After.Target {
				fleet = false
				break
			}
		}
		for _, row := range a.in.Rows {
			if !row.OK || row.Snapshot == nil || row.At < pw.Start || row.At > pw.End || (!fleet && row.Target != pw.After.Target) {
				continue
			}
			run, ok := row.Snapshot.Gauges[scrape.RequestsRunning]
			if !ok {
				continue
			}
			t := per[row.Target]
			if t == nil {
				t = &acc{}
				per[row.Target] = t
			}
			t.sum += run + row.Snapshot.Gauges[scrape.RequestsWaiting]
			t.n++
		}
		// Windows are weighted by their scrapes; targets add up.
		wsum, wn := 0.0, 0
		for _, t := range per {
			wsum += t.sum / float64(t.n)
			wn = max(wn, t.n)
		}
		mean += wsum * float64(wn)
		n += wn
	}
	if n == 0 {
		return 0, 0
	}
	return mean / float64(n), n
}
