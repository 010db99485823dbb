package run

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/workload"
)

// Outages, back-off and stalled streams (issue 21 item 7): the built-in
// engine restarting (with 503s, or refusing connections) on a schedule
// that is the ground truth, and hostile servers that stall, never answer,
// or cut connections before any response byte.

// outageSim is a run against the built-in engine (in this process) with
// the given faults and workload lines; no users or rate by default.
//
// With restarts the first failures do not abort the run (abort.
// first_failures: 0): these cases count what outages cost, and a downtime
// the run meets first is one of them. The abort's premise is real time
// here: 20 arrivals at 60/s span 333 ms against a 200-ms downtime, but a
// host that runs the engine's reopening timer late, or holds arrivals back
// and sends them together, put 20 of them in one downtime (beside other
// work, eight cases at once) and the run ended "nothing works". The abort
// itself is checked by its own cases ("sim: every request an HTTP error").
func outageSim(faults, wl string) func(string) string {
	if strings.Contains(faults, "restart_every") {
		wl += "\n  abort: {first_failures: 0}"
	}
	return func(string) string {
		return fmt.Sprintf(`
name: outage
engine:
  kind: sim
  preset: tiny
  process: inline
  faults: {%s}
workload:
  prompt_tokens: 16
  output_tokens: 16
%s
scrape: {interval: 300ms, timeout: 250ms}
`, faults, wl)
	}
}

// attemptsPerUserPerOutage bounds the failed attempts one closed-loop user
// makes in an outage of down (workload.Backoff*): every wait is at least
// half its delay, so the attempts are those whose half-delays sum within
// down, plus the one that meets the outage and one for the scheduler.
func attemptsPerUserPerOutage(down time.Duration) int {
	n, waited := 1, time.Duration(0)
	for k := 1; waited < down; k++ {
		waited += workload.BackoffDelay(k) / 2
		n++
	}
	return n + 1
}

// restartWindows checks the outages of a run against an engine that went
// down for down every every (config as truth: the engine's clock is not
// the run's, so the windows' spacing and lengths are compared): about one
// window per restart in the run, each as long as the downtime within the
// back-off's reach, and few attempts per user.
//
// The count, lengths and spacing are real time (fr.timed): the engine's
// restart timer and the client's sends run in this process, and a window
// runs from a failed attempt's send to the send of the first request that
// reached the engine, both stamped before connecting. Beside two CPU hogs
// under -race a host that held the client through a 200-ms downtime left
// windows of 0.4 ms, 14–46 ms apart, one restart split in two (five windows
// for three restarts): the client's sends, not the outage detection, were
// late. On a quiet machine they are held to the bounds as before; a run
// that splits or loses outages fails there. The attempts' bound is what the
// client's back-off controls, whatever the machine: a user waits at least
// half of each back-off delay between its attempts, so it fits no more of
// them into a window than attemptsPerUserPerOutage of the window's own
// length (when that is longer than the downtime).
func restartWindows(every, down time.Duration, users int) func(*testing.T, faultRun) {
	return func(t *testing.T, fr faultRun) {
		o := fr.sum.Outages
		span := spanOfRecords(fr.records)
		want := int(span / every)
		if o == nil {
			t.Fatalf("no outages in the summary over %v with a restart every %v", span, every)
		}
		if o.Count < want-1 || o.Count > want+1 {
			fr.timed("%d outages over %v, want %d±1 (a restart every %v)", o.Count, span, want, every)
		}
		for i, w := range o.Windows {
			length := time.Duration(w.Length * float64(time.Second))
			if !w.Open && (length < down/2 || length > down+workload.BackoffDelay(4)+150*time.Millisecond) {
				fr.timed("outage %d lasted %v, want about the downtime %v (within the back-off)", i, length, down)
			}
			if bound := users * attemptsPerUserPerOutage(max(down, length)); w.Attempts > bound {
				t.Errorf("outage %d of %v: %d failed attempts, more than %d (%d users backing off)", i, length, w.Attempts, bound, users)
			}
			if i > 0 {
				gap := time.Duration((w.Start - o.Windows[i-1].Start) * float64(time.Second))
				if d := gap - every; d < -300*time.Millisecond || d > 300*time.Millisecond {
					fr.timed("outages %d and %d are %v apart, want the restart period %v", i-1, i, gap, every)
				}
			}
		}
		if o.Outside.Covers == "" || o.Outside.Duration <= 0 || o.Outside.OK == 0 {
			t.Errorf("figures outside the outages %+v: want them, saying what they cover", o.Outside)
		}
	}
}

func spanOfRecords(rs []client.Record) time.Duration {
	var first, last time.Duration = -1, 0
	for _, r := range rs {
		if first < 0 || r.Sent < first {
			first = r.Sent
		}
		last = max(last, r.End)
	}
	return last - max(first, 0)
}

// openLoopArrivals checks that every failed attempt of an open-loop run is
// counted as an arrival that met an outage, at most about the rate times
// the outage's length each.
func openLoopArrivals(rate float64) func(*testing.T, faultRun) {
	return func(t *testing.T, fr faultRun) {
		o := fr.sum.Outages
		if o == nil {
			t.Fatal("no outages")
		}
		if o.Arrivals != o.Attempts {
			t.Errorf("%d of %d failed attempts counted as open-loop arrivals: every one is", o.Arrivals, o.Attempts)
		}
		// Real time (fr.timed): arrivals a busy host held back are sent
		// together when it lets the client run, more of them in a window
		// than its length at the rate.
		for i, w := range o.Windows {
			if bound := int(rate*(w.Length+0.2)) + 3; w.Arrivals > bound {
				fr.timed("outage %d of %.3fs met %d arrivals, more than the rate allows (%d): each fails once", i, w.Length, w.Arrivals, bound)
			}
		}
	}
}

// stalledOnly checks that the failures are stalled (never timeout), that
// at least min are, and that each says how long it was silent.
func stalledOnly(min int, says string) func(*testing.T, []client.Record) {
	return func(t *testing.T, rs []client.Record) {
		n := 0
		for _, r := range rs {
			switch {
			case r.OK(), r.ErrorClass == client.ErrCanceled:
			case r.ErrorClass == client.ErrStalled:
				n++
				if !strings.Contains(r.Error, "stall_timeout") || !strings.Contains(r.Error, says) {
					t.Errorf("%s: stalled with %q: want the silence and %q named", r.ID, r.Error, says)
				}
			default:
				t.Errorf("%s: %q %q, want success or stalled", r.ID, r.ErrorClass, r.Error)
			}
		}
		if n < min {
			t.Errorf("%d requests stalled, want at least %d", n, min)
		}
	}
}

// stalledAfter checks that stalled requests ended after their stall time,
// and not long after it (the watchdog's two looks).
func stalledAfter(stall time.Duration) func(*testing.T, []client.Record) {
	return func(t *testing.T, rs []client.Record) { stalledLate(stall, rs, t.Errorf) }
}

// stalledLate is stalledAfter, saying each miss with miss.
func stalledLate(stall time.Duration, rs []client.Record, miss func(format string, a ...any)) {
	for _, r := range rs {
		if r.ErrorClass != client.ErrStalled {
			continue
		}
		last := r.Sent
		if r.FirstByte > 0 {
			last = r.FirstByte
		}
		if n := len(r.Chunks); n > 0 {
			last = r.Chunks[n-1].At
		}
		if silent := r.End - last; silent < stall || silent > stall+2*client.StallTick(stall)+time.Second {
			miss("%s: ended %v after its last byte, want just over the stall time %v", r.ID, silent, stall)
		}
	}
}

// simStalls checks a run against the built-in engine stalling half its
// streams after their first output chunks: every failure stalled (never a
// timeout), at least one, each naming its stall_timeout. Where a stall fell
// and how long after the last byte it ended are real time (fr.timed): the
// engine runs in this process, and beside other work, eight cases at once,
// a host that held its response past a 300-ms stall time stalled requests
// before any chunk ("after status 0 and no output chunk", 520 ms of
// silence) and stamped a send 12 µs before its stall. On a quiet machine
// they fail as before.
func simStalls(stall time.Duration) func(*testing.T, faultRun) {
	return func(t *testing.T, fr faultRun) {
		n := 0
		for _, r := range fr.records {
			switch {
			case r.OK(), r.ErrorClass == client.ErrCanceled:
			case r.ErrorClass == client.ErrStalled:
				n++
				if !strings.Contains(r.Error, "stall_timeout") {
					t.Errorf("%s: stalled with %q: want the silence and the stall_timeout named", r.ID, r.Error)
				}
				if !strings.Contains(r.Error, "output chunks") {
					fr.timed("%s: stalled with %q: the engine stalls after output chunks", r.ID, r.Error)
				}
			default:
				t.Errorf("%s: %q %q, want success or stalled", r.ID, r.ErrorClass, r.Error)
			}
		}
		if n == 0 {
			t.Error("no request stalled, want at least 1")
		}
		stalledLate(stall, fr.records, fr.timed)
	}
}

// noOutage checks that a run met no outage.
func noOutage(t *testing.T, fr faultRun) {
	if fr.sum.Outages != nil {
		t.Errorf("outages %+v in a run that always reached its engine", fr.sum.Outages)
	}
}

// everyAttemptAnOutage checks that a server that cuts every connection
// before a response byte makes one open outage holding every request.
func everyAttemptAnOutage(t *testing.T, fr faultRun) {
	o := fr.sum.Outages
	if o == nil || o.Count != 1 || !o.Windows[0].Open {
		t.Fatalf("outages %+v: want one, open at the end", o)
	}
	failed := 0
	for _, r := range fr.records {
		if r.ErrorClass == client.ErrConnect {
			failed++
		}
	}
	if o.Attempts != failed {
		t.Errorf("%d attempts in the outage, %d records failed to reach the engine", o.Attempts, failed)
	}
}

// hijacked answers chat by taking the connection from net/http after it
// read the request's head, and doing what do says with it: the client's
// request is on the wire, the server has sent nothing. Model discovery and
// /metrics answer as a good engine's do.
func hijacked(do func(net.Conn)) http.HandlerFunc {
	return engineWith(func(w http.ResponseWriter, _ *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		do(c)
	}, nil)
}

// hold keeps a connection open, sending nothing, until the peer leaves
// (bounded: a broken test does not hang).
func hold(c net.Conn) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	buf := make([]byte, 512)
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

// resetAtSend resets the connection (RST: linger 0) before any response byte.
func resetAtSend(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

// silentHandler answers chat with head (headers, some chunks) and then
// says nothing more until the client leaves.
func silentHandler(chunks int, headers bool) http.HandlerFunc {
	return engineWith(func(w http.ResponseWriter, r *http.Request) {
		// The body first: net/http notices a client hanging up only once
		// the request body is consumed.
		_, _ = io.Copy(io.Discard, r.Body)
		if headers {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			for i := range chunks {
				fmt.Fprintf(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"w%d \"}}]}\n\n", i)
			}
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute): // a broken test does not hang
		}
	}, nil)
}

func outageFaultCases() []faultCase {
	users4 := "  concurrency: 4\n  duration: 3500ms"
	return []faultCase{
		{name: "outage: restarts refuse connections", scenario: outageSim("restart_every: 1s, restart_downtime: 200ms, restart_refuse: true", users4),
			bound: 30 * time.Second, want: completed, check: restartWindows(time.Second, 200*time.Millisecond, 4)},
		{name: "outage: restarts refuse, one user", scenario: outageSim("restart_every: 1s, restart_downtime: 200ms, restart_refuse: true", "  concurrency: 1\n  duration: 3500ms"),
			bound: 30 * time.Second, want: completed, check: restartWindows(time.Second, 200*time.Millisecond, 1)},
		{name: "outage: restarts refuse, sixteen users", scenario: outageSim("restart_every: 1s, restart_downtime: 200ms, restart_refuse: true", "  concurrency: 16\n  duration: 3500ms"),
			bound: 30 * time.Second, want: completed, check: restartWindows(time.Second, 200*time.Millisecond, 16)},
		{name: "outage: long downtimes refuse", scenario: outageSim("restart_every: 1500ms, restart_downtime: 600ms, restart_refuse: true", "  concurrency: 4\n  duration: 4s"),
			bound: 30 * time.Second, want: completed, check: restartWindows(1500*time.Millisecond, 600*time.Millisecond, 4)},
		{name: "outage: short downtimes refuse", scenario: outageSim("restart_every: 700ms, restart_downtime: 80ms, restart_refuse: true", "  concurrency: 4\n  duration: 3s"),
			bound: 30 * time.Second, want: completed, check: restartWindows(700*time.Millisecond, 80*time.Millisecond, 4)},
		{name: "outage: restarts answer 503, users back off", scenario: outageSim("restart_every: 1s, restart_downtime: 200ms", users4),
			bound: 30 * time.Second, want: completed, check: func(t *testing.T, fr faultRun) {
				noOutage(t, fr) // a 503 is an answer: the engine was reached
				n := fr.sum.Client.Requests.Errors[string(client.ErrHTTPStatus)]
				restarts := int(spanOfRecords(fr.records)/time.Second) + 1
				if bound := restarts * 4 * attemptsPerUserPerOutage(200*time.Millisecond); n == 0 || n > bound {
					t.Errorf("%d 503s over %d restarts, want some and at most %d: users back off", n, restarts, bound)
				}
			}},
		{name: "outage: open loop through refusals", scenario: outageSim("restart_every: 1s, restart_downtime: 250ms, restart_refuse: true", "  rate: 20\n  duration: 3500ms"),
			bound: 30 * time.Second, want: completed, check: openLoopArrivals(20)},
		{name: "outage: fast open loop through refusals", scenario: outageSim("restart_every: 1s, restart_downtime: 200ms, restart_refuse: true", "  rate: 60\n  duration: 3s"),
			bound: 30 * time.Second, want: completed, check: openLoopArrivals(60)},
		{name: "outage: open loop through 503s", scenario: outageSim("restart_every: 1s, restart_downtime: 200ms", "  rate: 30\n  duration: 3s"),
			bound: 30 * time.Second, want: completed, check: noOutage},
		{name: "outage: no restart, no outage", scenario: outageSim("", "  concurrency: 4\n  requests: 24"), bound: 30 * time.Second, want: completed, records: allOK, check: noOutage},
		{name: "stall: sim stalls past a 300ms stall time", scenario: outageSim("stall_rate: 0.5, stall_for: 10s", "  concurrency: 4\n  requests: 16\n  stall_timeout: 300ms"),
			bound: 30 * time.Second, want: completed, check: simStalls(300 * time.Millisecond)},
		{name: "stall: sim stalls past a 1s stall time", scenario: outageSim("stall_rate: 0.5, stall_for: 5s", "  concurrency: 4\n  requests: 12\n  stall_timeout: 1s"),
			bound: 30 * time.Second, want: completed, check: simStalls(time.Second)},
		{name: "stall: pauses shorter than the stall time are no stall", scenario: outageSim("stall_rate: 0.5, stall_for: 150ms", "  concurrency: 4\n  requests: 16\n  stall_timeout: 2s"),
			bound: 30 * time.Second, want: completed, records: allOK},
		// The timeout is 2 s, not 400 ms: it only has to come before the
		// 5-s stall time, and a stream the engine does not stall must end
		// within it (about 40 ms quiet; under -race beside two CPU hogs
		// every one of 12 took more than 400 ms, and the run failed).
		{name: "stall: the request timeout comes first", scenario: outageSim("stall_rate: 0.5, stall_for: 10s", "  concurrency: 4\n  requests: 12\n  stall_timeout: 5s\n  timeout: 2s"),
			bound: 30 * time.Second, want: completed, records: someFailedAs(client.ErrTimeout)},
		{name: "stall: headers never sent", server: silentHandler(0, false), scenario: externalYAML("  requests: 4\n  stall_timeout: 500ms", ""),
			bound: 20 * time.Second, want: failed, records: func(t *testing.T, rs []client.Record) {
				stalledOnly(4, "no response headers")(t, rs)
				stalledAfter(500*time.Millisecond)(t, rs)
			}},
		{name: "stall: headers never sent, stall off, timeout", server: silentHandler(0, false), scenario: externalYAML("  requests: 2\n  stall_timeout: 0s\n  timeout: 1s", ""),
			bound: 20 * time.Second, want: failed, records: everyRecordFailed(client.ErrTimeout)},
		{name: "stall: headers and no chunk", server: silentHandler(0, true), scenario: externalYAML("  requests: 4\n  stall_timeout: 400ms", ""),
			bound: 20 * time.Second, want: failed, records: stalledOnly(4, "status 200 and no output chunk")},
		{name: "stall: two chunks, then silence", server: silentHandler(2, true), scenario: externalYAML("  requests: 4\n  stall_timeout: 400ms", ""),
			bound: 20 * time.Second, want: failed, records: func(t *testing.T, rs []client.Record) {
				stalledOnly(4, "2 output chunks")(t, rs)
				for _, r := range rs {
					if len(r.Chunks) != 2 {
						t.Errorf("%s: %d chunks kept, want the 2 that came", r.ID, len(r.Chunks))
					}
				}
			}},
		{name: "stall: a server that takes the request and never answers", server: hijacked(hold), scenario: externalYAML("  requests: 4\n  stall_timeout: 500ms", ""),
			bound: 20 * time.Second, want: failed, records: func(t *testing.T, rs []client.Record) {
				stalledOnly(4, "no response headers")(t, rs)
				stalledAfter(500*time.Millisecond)(t, rs)
			}},
		{name: "stall: never answers, a short stall time", server: hijacked(hold), scenario: externalYAML("  requests: 2\n  stall_timeout: 150ms", ""),
			bound: 20 * time.Second, want: failed, records: stalledOnly(2, "no response headers")},
		{name: "outage: resets at send", server: hijacked(resetAtSend), scenario: externalYAML("  requests: 6", ""),
			bound: 20 * time.Second, want: failed, records: everyRecordFailed(client.ErrConnect), check: everyAttemptAnOutage},
		{name: "outage: hijacked and closed before a byte", server: engineWith(func(w http.ResponseWriter, _ *http.Request) {
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
		}, nil), scenario: externalYAML("  requests: 6", ""), bound: 20 * time.Second, want: failed,
			records: everyRecordFailed(client.ErrConnect), check: everyAttemptAnOutage},
	}
}

// TestOutageAcceptance is issue 21's acceptance: four users for 12 s
// against the built-in engine down 200 ms every 3 s (refusing connections),
// beside the same run against an undisturbed engine. Each downtime is one
// outage of about its length (Engine.Downtimes is the truth), each costs a
// few failed attempts per user, the good requests are at least 80 % of the
// undisturbed run's scaled by the uptime, and the server view holds across
// the restarts.
func TestOutageAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("two 12 s runs")
	}
	quiet.Busy(t)
	// The outages are checked against the truth exactly on every attempt;
	// the good-request ratio compares two runs in real time, so a miss while
	// the machine was busy is run again (decision 0033).
	quiet.Retry{Within: 2 * time.Minute, QuietMisses: 2}.Run(t, func(int) []string {
		// The undisturbed run goes beside the one with outages, not before
		// it (12 s of the package's sequential time): the ratio of their
		// good requests then compares two runs on the same machine at the
		// same time, and each is four users of the tiny preset, a few
		// percent of a core.
		var calm faultRun
		calmDone := make(chan struct{})
		go func() {
			defer close(calmDone)
			t.Run("undisturbed", func(t *testing.T) { calm = acceptanceRun(t, sim.Faults{}, acceptanceUsers) })
		}()
		defer func() { <-calmDone }() // a t.Fatal below waits for it too
		eng := newAcceptanceEngine(t, sim.Faults{RestartEvery: 3 * time.Second, RestartDowntime: acceptanceDown, RestartRefuse: true})
		fr := runFault(t, faultCase{name: "acceptance", scenario: acceptanceYAML(eng.url, acceptanceUsers), bound: 60 * time.Second, want: completed})
		<-calmDone
		if calm.sum.Run.Duration <= 0 {
			t.Fatal("the undisturbed run has no summary")
		}
		o := fr.sum.Outages
		if o == nil {
			t.Fatal("no outages in the summary")
		}
		misses := checkAgainstDowntimes(t, fr, eng.e.Downtimes())
		span := fr.sum.Run.Duration
		uptime := (span - o.Total) / span
		good, calmGood := float64(fr.sum.Client.Requests.OK), float64(calm.sum.Client.Requests.OK)
		want := 0.8 * calmGood * uptime * fr.sum.Run.Duration / calm.sum.Run.Duration
		t.Logf("good %v vs undisturbed %v, uptime %.3f; outside the outages: %.1f requests/s over %.2f s", good, calmGood, uptime,
			o.Outside.Throughput, o.Outside.Duration)
		for _, ph := range fr.sum.Phases {
			if ph.Measured && ph.Server == nil {
				t.Errorf("phase %s has no server view: the closing snapshot must be retried across a restart", ph.Name)
			}
		}
		checkServerAcrossRestarts(t, fr, eng.e.Downtimes())
		if good < want {
			misses = append(misses, fmt.Sprintf("%v good requests, below 80%% of the undisturbed run's %v scaled by the uptime %.3f (%.0f)", good, calmGood, uptime, want))
		}
		return misses
	})
}

// checkServerAcrossRestarts: the engine's finished count over the run,
// stitched across its restarts from the scrapes, is the client's successes
// less only what no scraper could see — the requests that finished between
// the last scrape before a restart and the restart (the old process's
// count dies with it) — within a few for requests counted a little before
// or after their last byte.
func checkServerAcrossRestarts(t *testing.T, fr faultRun, downtimes []sim.Downtime) {
	t.Helper()
	if fr.sum.Server == nil {
		t.Fatal("no server view")
	}
	rows, _, err := rundir.ReadRows(fr.dir)
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, d := range downtimes {
		from := d.Start.Sub(fr.sum.Run.StartedAt)
		seen := time.Duration(-1) // the last successful scrape before the restart
		for _, r := range rows {
			if r.OK && r.At < from {
				seen = max(seen, r.At)
			}
		}
		for _, r := range fr.records {
			if r.OK() && r.End > seen && r.End <= from {
				lost++
			}
		}
	}
	finished, ok := fr.sum.Server.Counters["requests_finished"], float64(fr.sum.Client.Requests.OK)
	if slack := float64(2 * acceptanceUsers); finished > ok+slack || finished < ok-float64(lost)-slack {
		t.Errorf("the engine counted %v finished requests, the client %v ok, %d of them finished where no scrape could see them: the count must hold across the restarts",
			finished, ok, lost)
	}
	t.Logf("server finished %v, client ok %v, %d unseen by any scrape", finished, ok, lost)
}

const (
	acceptanceUsers = 4
	acceptanceDown  = 200 * time.Millisecond
)

// checkAgainstDowntimes compares the run's outages with the engine's
// downtimes (the truth) it met: one window each, starting when the engine
// went down, as long as it stayed down within the back-off's last wait, each
// costing a few attempts per user. Which downtimes the client met, and when
// its windows start and end, are real time: the misses it returns go to
// quiet.Retry (under -race beside two CPU hogs a host that held the client
// through a 200-ms downtime left it unmet: 3 windows for 4 downtimes). The
// attempts are checked whatever the machine: a user waits at least half of
// each back-off delay between attempts, so no more fit in a window than
// attemptsPerUserPerOutage of its own length.
func checkAgainstDowntimes(t *testing.T, fr faultRun, downtimes []sim.Downtime) (misses []string) {
	t.Helper()
	o := fr.sum.Outages
	first, last := time.Duration(-1), time.Duration(0)
	for _, r := range fr.records {
		if first < 0 || r.Sent < first {
			first = r.Sent
		}
		last = max(last, r.End)
	}
	var truth []sim.Downtime
	for _, d := range downtimes {
		if from := d.Start.Sub(fr.sum.Run.StartedAt); from > first && from < last { // the last may still be open
			truth = append(truth, d)
		}
	}
	if len(truth) < 3 {
		t.Fatalf("%d downtimes in the run (truth), want at least 3 (one every 3 s over 12 s)", len(truth))
	}
	if o.Count != len(truth) {
		return []string{fmt.Sprintf("%d outages reported, %d downtimes in the run (truth): %+v", o.Count, len(truth), o.Windows)}
	}
	for i, d := range truth {
		w := o.Windows[i]
		start := time.Duration(w.Start * float64(time.Second))
		length := time.Duration(w.Length * float64(time.Second))
		from := d.Start.Sub(fr.sum.Run.StartedAt)
		if start < from-20*time.Millisecond || start > from+150*time.Millisecond {
			misses = append(misses, fmt.Sprintf("outage %d began at %v, the engine went down at %v", i, start, from))
		}
		// The window ends at the first send after the engine is back: within
		// the back-off's last wait of the truth.
		if !w.Open && (length < d.Length()-150*time.Millisecond || length > d.Length()+workload.BackoffDelay(4)+150*time.Millisecond) {
			misses = append(misses, fmt.Sprintf("outage %d lasted %v, the engine was down %v", i, length, d.Length()))
		}
		if perUser := attemptsPerUserPerOutage(max(d.Length(), length)); w.Attempts > acceptanceUsers*perUser {
			t.Errorf("outage %d of %v: %d failed attempts, more than %d per user", i, length, w.Attempts, perUser)
		}
		t.Logf("outage %d: at %v for %v (truth %v for %v), %d attempts, %d affected", i, start, length, from, d.Length(), w.Attempts, w.Affected)
	}
	// Each user fails at most the attempts its back-off allows in each
	// downtime as the engine's truth measured it, and the request the
	// downtime cut.
	bound := 0
	for _, d := range truth {
		bound += acceptanceUsers * (attemptsPerUserPerOutage(max(acceptanceDown, d.Length())) + 1)
	}
	if f := fr.sum.Client.Requests.Failed; f > bound {
		t.Errorf("%d failed requests over %d outages, more than %d: thousands is the bug this fixes", f, len(truth), bound)
	}
	return misses
}

type acceptanceEngine struct {
	e   *sim.Engine
	url string
}

func newAcceptanceEngine(t *testing.T, f sim.Faults) acceptanceEngine {
	t.Helper()
	p, err := sim.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	e, err := sim.New(sim.Config{Params: p, Faults: f})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := e.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop(context.Background()) })
	return acceptanceEngine{e: e, url: strings.TrimSuffix(ep.BaseURL, "/v1")}
}

func acceptanceYAML(url string, users int) func(string) string {
	return func(string) string {
		return fmt.Sprintf(`
name: outage-acceptance
engine: {kind: external, base_url: "%s/v1", metrics_url: "%s/metrics"}
workload: {concurrency: %d, duration: 12s, prompt_tokens: 16, output_tokens: 16}
scrape: {interval: 300ms, timeout: 250ms}
`, url, url, users)
	}
}

// acceptanceRun is the undisturbed run the acceptance compares with.
func acceptanceRun(t *testing.T, f sim.Faults, users int) faultRun {
	eng := newAcceptanceEngine(t, f)
	return runFault(t, faultCase{name: "undisturbed", scenario: acceptanceYAML(eng.url, users), bound: 60 * time.Second, want: completed})
}
