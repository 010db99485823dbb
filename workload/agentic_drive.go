package workload

import (
	"fmt"
	"sync"
	"time"

	"github.com/llmbench-org/llmbench/scenarios"
)

// agenticPlan is an agentic trace as a plan replays it: the root sessions
// arrive at the trace's start times (time_scale applied), each session
// sends its calls one after the other, threading the engine's replies.
type agenticPlan struct {
	trace *agentTrace
	text  agentText
	scale float64 // trace.time_scale: multiplies every time the trace gives
	// ordinal is each session's place among the roots (-1: a subagent).
	ordinal []int
}

// buildAgentic reads an agentic trace into the plan's dataset.
func (p *Plan) buildAgentic(s scenarios.Scenario) error {
	t := s.Workload.Trace
	f, err := s.Open(t.Path)
	if err != nil {
		return err
	}
	var a *agentTrace
	if t.Format == scenarios.TraceWeka {
		a, err = parseWeka(t.Path, f)
	} else {
		a, err = parseCopilot(t.Path, f)
	}
	f.Close()
	if err != nil {
		return err
	}
	ap := &agenticPlan{trace: a, text: agentText{seed: s.Seed}, scale: t.TimeScale, ordinal: make([]int, len(a.sessions))}
	for i := range ap.ordinal {
		ap.ordinal[i] = -1
	}
	for k, r := range a.roots {
		ap.ordinal[r] = k
	}
	p.agentic = ap
	p.data = &agentRows{trace: a, text: ap.text}
	p.dataDesc = fmt.Sprintf("trace %s (%s): %s, replies threaded from the engine's", t.Path, t.Format, a.describe())
	return nil
}

// scaled applies the trace's time scale to one of its times.
func (ap *agenticPlan) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * ap.scale)
}

// phase is the replay's one phase: an open loop whose arrivals are the root
// sessions, bounded by the trace's calls (or workload.requests).
func (ap *agenticPlan) phase(w scenarios.Workload) Phase {
	offsets := make([]time.Duration, len(ap.trace.starts))
	for i, at := range ap.trace.starts {
		offsets[i] = ap.scaled(at)
	}
	requests := ap.trace.calls
	if w.Requests > 0 {
		requests = min(requests, w.Requests)
	}
	return Phase{Name: "main", Measured: true, Drain: true, Pacer: Replay(offsets), Arrival: "trace",
		MaxConcurrency: w.MaxConcurrency, WhenCapped: w.WhenCapped, Duration: w.Duration, Requests: requests}
}

// mark sets what every call of a session carries: its session, and the
// ask for the engine's reply.
func (ap *agenticPlan) mark(p *Plan, r *Request) {
	s, _ := ap.trace.locate(r.Index % ap.trace.calls)
	r.Session = sessionID(p.name, p.seed, s)
	r.KeepReply = true
}

// intended is when request i goes out as planned, for a preview: a root's
// first call at its arrival; any other call depends on the replies before
// it (0, shown as "-").
func (ap *agenticPlan) intended(i int) time.Duration {
	s, c := ap.trace.locate(i % ap.trace.calls)
	if k := ap.ordinal[s]; c == 0 && k >= 0 {
		return ap.scaled(ap.trace.starts[k])
	}
	return 0
}

// agentRoot replays root session number n of the run (its arrival),
// which was due at due.
func (pr *phaseRun) agentRoot(ap *agenticPlan, n int, due time.Duration) {
	roots := ap.trace.roots
	pr.agentSession(ap, roots[n%len(roots)], due, true)
}

// agentSession replays session s: before each call it launches the
// subagents spawned since the previous reply and waits for them, then
// waits the trace's think or tool time from the later of that reply's end
// and theirs, then sends the call with the history so far, the engine's own
// replies in it. A call that failed ends the session: there is no reply to
// go on from. due is the first call's intended time; admitted says the
// open loop admitted the first call already (a root's arrival).
func (pr *phaseRun) agentSession(ap *agenticPlan, s int, due time.Duration, admitted bool) {
	r := pr.r
	p := r.d.Plan
	a := ap.trace
	sess := &a.sessions[s]
	hist, tokens := a.opening(ap.text, s)
	var reply *Message
	anchor := r.now() // the previous reply's end (the session's start)
	if due > 0 {
		anchor = due
	}
	for c := 0; c <= len(sess.calls); c++ {
		base := anchor
		if spawns := sess.spawns[c]; len(spawns) > 0 {
			pr.agentSubagents(ap, spawns, anchor)
			base = max(anchor, r.now())
		}
		if c == len(sess.calls) {
			return
		}
		call := sess.calls[c]
		at := base + ap.scaled(call.gap)
		if c > 0 || !admitted {
			if !pr.sleep(at-r.now()) || !pr.admit() {
				return
			}
		}
		hist, tokens = a.extend(ap.text, s, c, hist, tokens, reply)
		i := a.first[s] + c
		o := pr.send(Request{ID: p.requestID(i), Index: i, Phase: pr.phase.Name, Intended: at,
			Messages: hist, PromptTokens: tokens, MaxTokens: call.output, IgnoreEOS: p.ignoreEOS,
			Session: sessionID(p.name, p.seed, s), KeepReply: true})
		anchor = r.now()
		if !o.OK || o.Reply == nil {
			return
		}
		reply = o.Reply
		reply.Role = "assistant"
		hist = append(hist, *reply)
		tokens += call.output
	}
}

// agentSubagents runs the subagents spawned after the reply that ended at
// anchor, each after its delay, and returns once they all ended.
func (pr *phaseRun) agentSubagents(ap *agenticPlan, spawns []agentSpawn, anchor time.Duration) {
	var wg sync.WaitGroup
	for _, sp := range spawns {
		wg.Add(1)
		pr.r.tasks.Go(func() {
			defer wg.Done()
			pr.agentSession(ap, sp.session, anchor+ap.scaled(sp.delay), false)
		})
	}
	wg.Wait()
}

// waitAgents holds an agentic replay's arrivals open, once its last root
// session arrived, until every session ended (their later calls are
// admitted only while arrivals are open), the deadline passed, the request
// limit was reached or the run halted.
func (pr *phaseRun) waitAgents(deadline <-chan time.Time) {
	if pr.r.d.Plan.agentic == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		pr.agents.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-deadline:
	case <-pr.full:
	case <-pr.r.halt:
	}
}

// shardRequests is shard i of n's request limit: the calls of the session
// trees whose roots it sends (arrivals i, i+n, …), when the whole trace is
// replayed; a limit that cuts the trace is dealt out evenly.
func (ap *agenticPlan) shardRequests(requests, i, n int) int {
	a := ap.trace
	if requests < a.calls {
		return shareOf(requests, i, n)
	}
	total := 0
	for k := i; k < len(a.roots); k += n {
		total += a.treeCalls(a.roots[k])
	}
	return total
}

// treeCalls is the calls of session s and of every subagent it spawns.
func (a *agentTrace) treeCalls(s int) int {
	n := len(a.sessions[s].calls)
	for _, slot := range a.sessions[s].spawns {
		for _, sp := range slot {
			n += a.treeCalls(sp.session)
		}
	}
	return n
}
