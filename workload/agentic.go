package workload

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// An agentic trace is sessions of calls to the engine, as a coding agent
// makes them: each call's prompt is the session's whole history (its system
// prompt, the user's words, the engine's replies, the tool results), so a
// session is a growing shared prefix. Subagent sessions are spawned from a
// parent's call and joined before the parent's next one. The readers of
// each format (agentic_weka.go, agentic_copilot.go) turn a file into this
// one model; the Driver replays it (agentic_drive.go), threading each
// session with the replies the engine actually gave
// (docs/decisions/1600-agentic-trace-replay.md).

// agentTrace is the sessions of an agentic trace, read once, immutable.
type agentTrace struct {
	sessions []agentSession
	// roots are the sessions the trace's clock starts (no parent), in
	// start order, with their start offsets from the first one's.
	roots  []int
	starts []time.Duration
	// first is each session's first call's request index in the plan:
	// the calls are numbered session by session, in file order.
	first []int
	calls int // calls of every session together
}

// agentSession is one agent's conversation.
type agentSession struct {
	name   string // the trace's id for it, for messages
	parent int    // the session that spawned it; -1 for a root
	system int    // tokens of the system prompt opening its history (0: none)
	calls  []agentCall
	// spawns[k] are the subagents launched once the reply of call k-1
	// ended (k = 0: at the session's start) and joined before call k
	// (k = len(calls): before the session ends); len(calls)+1 entries.
	spawns [][]agentSpawn
}

// agentSpawn is a subagent session and how long after the parent's reply
// it starts.
type agentSpawn struct {
	session int
	delay   time.Duration
}

// agentCall is one call of a session: what is added to the history before
// it, after how long, and how long a reply it asks for.
type agentCall struct {
	// gap is the trace's think or tool time: from the later of the
	// previous reply's end and its subagents' end to this call (the
	// session's start for its first call).
	gap time.Duration
	// tools are the tokens of each tool result that opens the call (tool
	// messages answering the previous reply's calls); without any, user
	// is the tokens of a user message.
	tools []int
	user  int
	// reset starts the history over (the trace's prompt shrank: the agent
	// compacted its context): the system prompt and this call's user
	// message only.
	reset  bool
	output int
	cached int // the trace's cached prompt tokens; -1 when it gives none
}

// maxAgentSessions and maxAgentCalls bound a trace's sessions and calls in
// all: the plan holds them in memory (a few hundred bytes each).
const (
	maxAgentSessions = 1_000_000
	maxAgentCalls    = 10_000_000
)

// finish numbers the calls, orders the roots by start and checks the
// bounds; starts[i] is session i's start on the trace's clock (roots only).
func (a *agentTrace) finish(name string, starts map[int]time.Duration) error {
	if len(a.sessions) == 0 {
		return fmt.Errorf("%s: no session with a call in the trace", name)
	}
	if len(a.sessions) > maxAgentSessions {
		return fmt.Errorf("%s: %d sessions, above the bound of %d", name, len(a.sessions), maxAgentSessions)
	}
	a.first = make([]int, len(a.sessions))
	for i, s := range a.sessions {
		a.first[i] = a.calls
		a.calls += len(s.calls)
		if a.calls > maxAgentCalls {
			return fmt.Errorf("%s: more than %d calls", name, maxAgentCalls)
		}
		if s.parent < 0 {
			a.roots = append(a.roots, i)
		}
	}
	if len(a.roots) == 0 {
		return fmt.Errorf("%s: every session has a parent: none starts the replay", name)
	}
	// A stable order by start: equal starts keep the file's order.
	slices.SortStableFunc(a.roots, func(x, y int) int { return cmp.Compare(starts[x], starts[y]) })
	origin := starts[a.roots[0]]
	for _, r := range a.roots {
		a.starts = append(a.starts, starts[r]-origin)
	}
	return nil
}

// locate is the session and call of plan request i.
func (a *agentTrace) locate(i int) (session, call int) {
	lo, hi := 0, len(a.first)-1
	for lo < hi { // the last session whose first call is at or before i
		mid := (lo + hi + 1) / 2
		if a.first[mid] <= i {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo, i - a.first[lo]
}

// sessionID is session s's id on the wire (X-Session-Id): unique within a
// run and header-safe (scenario names are [A-Za-z0-9._-]).
func sessionID(plan string, seed int64, s int) string {
	return fmt.Sprintf("%s-%d-s%d", plan, seed, s)
}

// agentText makes the session's texts: deterministic words for each
// user message and tool result, the system prompt keyed by its length
// (sessions with equal system prompts share that prefix, as an agent's
// sessions do), and the planned replies of a preview.
type agentText struct{ seed int64 }

func (t agentText) system(tokens int) string {
	return words(newRand(t.seed, streamAgentSys, uint64(tokens)), tokens)
}

// key numbers the texts of session s: call c, part k.
func agentKey(s, c, k int) uint64 { return uint64(s)<<36 | uint64(c)<<12 | uint64(k) }

func (t agentText) user(s, c, tokens int) string {
	return words(newRand(t.seed, streamAgent, agentKey(s, c, 0)), tokens)
}

func (t agentText) tool(s, c, k, tokens int) string {
	return words(newRand(t.seed, streamAgent, agentKey(s, c, k+1)), tokens)
}

func (t agentText) reply(s, c, tokens int) string {
	return words(newRand(t.seed, streamAgentOut, agentKey(s, c, 0)), tokens)
}

// plannedToolID names tool result k of call c when the reply it follows
// made no call for it to answer.
func plannedToolID(s, c, k int) string { return fmt.Sprintf("call_%d_%d_%d", s, c, k) }

// opening is the history a session starts with: its system prompt.
func (a *agentTrace) opening(t agentText, s int) ([]Message, int) {
	if sys := a.sessions[s].system; sys > 0 {
		return []Message{{Role: "system", Content: t.system(sys)}}, sys
	}
	return nil, 0
}

// extend appends call c's new messages to a session's history (tokens its
// planned length): the tool results answering reply's calls, or the user's
// message; a reset call starts over from the opening.
func (a *agentTrace) extend(t agentText, s, c int, hist []Message, tokens int, reply *Message) ([]Message, int) {
	call := a.sessions[s].calls[c]
	if call.reset {
		hist, tokens = a.opening(t, s)
	}
	if len(call.tools) == 0 {
		return append(hist, Message{Role: "user", Content: t.user(s, c, call.user)}), tokens + call.user
	}
	for k, n := range call.tools {
		id := plannedToolID(s, c, k)
		if reply != nil && k < len(reply.ToolCalls) && reply.ToolCalls[k].ID != "" {
			id = reply.ToolCalls[k].ID
		}
		hist = append(hist, Message{Role: "tool", Content: t.tool(s, c, k, n), ToolCallID: id})
		tokens += n
	}
	return hist, tokens
}

// agentRows is the dataset of an agentic trace. Request i is a call with
// the history the plan expects: the planned replies (as many words as each
// call's output) stand in for the engine's, which the Driver threads in
// their place when it runs (agentic_drive.go).
type agentRows struct {
	trace *agentTrace
	text  agentText
}

func (r *agentRows) request(i int) ([]Message, int, int) {
	a := r.trace
	s, c := a.locate(i % a.calls)
	hist, tokens := a.opening(r.text, s)
	var reply *Message
	for k := 0; k <= c; k++ {
		if k > 0 {
			prev := a.sessions[s].calls[k-1]
			reply = &Message{Role: "assistant", Content: r.text.reply(s, k-1, prev.output)}
			hist = append(hist, *reply)
			tokens += prev.output
		}
		hist, tokens = a.extend(r.text, s, k, hist, tokens, reply)
	}
	return hist, tokens, a.sessions[s].calls[c].output
}

// describe says what the trace holds, for the plan's dataset line.
func (a *agentTrace) describe() string {
	subs, tools := 0, 0
	for _, s := range a.sessions {
		if s.parent >= 0 {
			subs++
		}
		for _, c := range s.calls {
			if len(c.tools) > 0 {
				tools++
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d sessions (%d subagents), %d calls, %d after tool results", len(a.sessions), subs, a.calls, tools)
	return b.String()
}
