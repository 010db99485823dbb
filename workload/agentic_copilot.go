package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// The GitHub Copilot coding-agent trace shape (2026): sessions of turns,
// each turn a user request served by llm_calls, tool batches between the
// calls, subagent sessions spawned from a parent's call. No public schema
// of it could be found (decision 1600), so llmbench reads this JSON-lines
// rendering of it, one session a line, its field names those the shape's
// description uses:
//
//	{"session_id": "s1", "parent_session_id": "s0", "parent_call_id": "c3",
//	 "system_tokens": 1200,
//	 "turns": [{"turn_id": "t1", "user_tokens": 40,
//	            "llm_calls": [{"call_id": "c1",
//	                           "start_time": "2026-01-05T10:00:00.000Z", "end_time": …,
//	                           "input_tokens": 1240, "output_tokens": 80, "cached_tokens": 1200,
//	                           "tool_batch": {"start_time": …, "end_time": …,
//	                                          "tools": [{"name": "bash", "result_tokens": 300}]}}]}]}
//
// Times are RFC 3339 strings or milliseconds since the epoch; every session
// is on the same clock. parent_session_id and parent_call_id are absent for
// a root session.

type copilotSession struct {
	SessionID       string        `json:"session_id"`
	ParentSessionID string        `json:"parent_session_id"`
	ParentCallID    string        `json:"parent_call_id"`
	SystemTokens    int           `json:"system_tokens"`
	Turns           []copilotTurn `json:"turns"`
}

type copilotTurn struct {
	TurnID     string        `json:"turn_id"`
	UserTokens *int          `json:"user_tokens"`
	LLMCalls   []copilotCall `json:"llm_calls"`
	// ToolBatches: the published schema (agentic_copilot_published.go).
	ToolBatches []copilotToolBatch `json:"tool_batches"`
}

type copilotCall struct {
	CallID       string        `json:"call_id"`
	StartTime    *copilotTime  `json:"start_time"`
	EndTime      *copilotTime  `json:"end_time"`
	InputTokens  *int          `json:"input_tokens"`
	OutputTokens *int          `json:"output_tokens"`
	CachedTokens *int          `json:"cached_tokens"`
	ToolBatch    *copilotBatch `json:"tool_batch"`
	// The published schema's names (agentic_copilot_published.go).
	MessageID  string           `json:"message_id"`
	Timestamp  *copilotTime     `json:"timestamp"`
	DurationMS *float64         `json:"duration_ms"`
	Tokens     *copilotTokens   `json:"tokens"`
	Metadata   []copilotSegment `json:"message_metadata"`
}

type copilotBatch struct {
	Tools []struct {
		Name         string `json:"name"`
		ResultTokens int    `json:"result_tokens"`
	} `json:"tools"`
}

// copilotTime is a timestamp: an RFC 3339 string or epoch milliseconds,
// as an offset from the Unix epoch.
type copilotTime time.Duration

func (t *copilotTime) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		var at time.Time
		err := fmt.Errorf("no layout")
		for _, layout := range copilotTimeLayouts { // agentic_copilot_published.go
			if at, err = time.Parse(layout, s); err == nil {
				break
			}
		}
		if err != nil || at.Year() < 1970 || at.Year() > 2200 {
			return fmt.Errorf("want an RFC 3339 time from 1970 to 2200 or epoch milliseconds, got %q", s)
		}
		*t = copilotTime(at.Sub(time.Unix(0, 0)))
		return nil
	}
	var ms float64
	if err := json.Unmarshal(b, &ms); err != nil {
		return fmt.Errorf("want an RFC 3339 time or epoch milliseconds, got %s", b)
	}
	if !(ms >= 0 && ms <= maxEpochMillis) { // NaN is neither
		return fmt.Errorf("want epoch milliseconds from 0 to %g (the year 2200), got %s", float64(maxEpochMillis), b)
	}
	*t = copilotTime(seconds(ms / 1000))
	return nil
}

// maxEpochMillis is the year 2200 in epoch milliseconds: as far as an
// RFC 3339 time of the trace may go.
const maxEpochMillis = 7_258_118_400_000

// copilotLine is a session as read, with the line it came from.
type copilotLine struct {
	s    copilotSession
	line int
}

// parseCopilot reads a Copilot trace: the sessions, then their calls and
// how they spawn one another.
func parseCopilot(name string, r io.Reader) (*agentTrace, error) {
	var lines []copilotLine
	index := map[string]int{}
	lr := newLineReader(name, r)
	for lr.Next() {
		text := bytes.TrimSpace(lr.Bytes())
		if len(text) == 0 {
			continue
		}
		var s copilotSession
		if err := json.Unmarshal(text, &s); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, lr.Line(), jsonLineError(err))
		}
		if s.SessionID == "" {
			return nil, fmt.Errorf("%s:%d: missing \"session_id\"", name, lr.Line())
		}
		if empty, err := s.fromPublished(); err != nil || empty { // agentic_copilot_published.go
			if err != nil {
				return nil, fmt.Errorf("%s:%d: session %q: %w", name, lr.Line(), s.SessionID, err)
			}
			continue
		}
		if _, dup := index[s.SessionID]; dup {
			return nil, fmt.Errorf("%s:%d: session %q appears twice", name, lr.Line(), s.SessionID)
		}
		if len(lines) >= maxAgentSessions {
			return nil, fmt.Errorf("%s:%d: more than %d sessions", name, lr.Line(), maxAgentSessions)
		}
		index[s.SessionID] = len(lines)
		lines = append(lines, copilotLine{s: s, line: lr.Line()})
	}
	if err := lr.Err(); err != nil {
		return nil, err
	}
	a := &agentTrace{sessions: make([]agentSession, len(lines))}
	bounds := make([][2]time.Duration, len(lines)) // each session's first start and last end
	for i, l := range lines {
		s, b, err := copilotCalls(l.s, fmt.Sprintf("%s:%d: session %q", name, l.line, l.s.SessionID))
		if err != nil {
			return nil, err
		}
		s.parent = -1
		a.sessions[i], bounds[i] = s, b
	}
	starts := map[int]time.Duration{}
	for i, l := range lines {
		if err := copilotSpawn(a, lines, index, bounds, i); err != nil {
			return nil, fmt.Errorf("%s:%d: session %q: %w", name, l.line, l.s.SessionID, err)
		}
		if a.sessions[i].parent < 0 {
			starts[i] = bounds[i][0]
		}
	}
	if err := a.finish(name, starts); err != nil {
		return nil, err
	}
	return a, nil
}

// copilotCalls turns a session's turns into calls: the first call of a turn
// opens with the user's message, a call after a tool batch with its
// results, any other with the prompt's growth as a user message; a prompt
// that shrank starts over.
func copilotCalls(cs copilotSession, where string) (agentSession, [2]time.Duration, error) {
	s := agentSession{name: cs.SessionID, system: max(cs.SystemTokens, 0), spawns: [][]agentSpawn{nil}}
	var span [2]time.Duration
	var prev *copilotCall
	prevIn := 0
	for ti, turn := range cs.Turns {
		for ci := range turn.LLMCalls {
			c := &turn.LLMCalls[ci]
			at := fmt.Sprintf("%s: turns[%d].llm_calls[%d]", where, ti, ci)
			if err := checkCopilotCall(c); err != nil {
				return s, span, fmt.Errorf("%s: %w", at, err)
			}
			in := *c.InputTokens
			call := agentCall{output: max(*c.OutputTokens, 1), cached: -1}
			if c.CachedTokens != nil {
				call.cached = *c.CachedTokens
			}
			switch {
			case prev == nil:
				span[0] = time.Duration(*c.StartTime)
				s.system = min(s.system, in)
				call.user = in - s.system
				if turn.UserTokens != nil && *turn.UserTokens >= 0 {
					call.user = *turn.UserTokens
				}
			default:
				call.gap = max(0, time.Duration(*c.StartTime)-time.Duration(*prev.EndTime))
				copilotGrowth(&call, s.system, in, prevIn+max(*prev.OutputTokens, 1), prev.ToolBatch, ci == 0, turn.UserTokens)
			}
			if err := checkTokens("the planned prompt", in); err != nil {
				return s, span, fmt.Errorf("%s: %w", at, err)
			}
			prevIn, prev = in, c
			span[1] = max(span[1], time.Duration(*c.EndTime))
			s.calls = append(s.calls, call)
			s.spawns = append(s.spawns, nil)
			if len(s.calls) > maxAgentCalls {
				return s, span, fmt.Errorf("%s: more than %d calls", at, maxAgentCalls)
			}
		}
	}
	if len(s.calls) == 0 {
		return s, span, fmt.Errorf("%s: no llm_calls", where)
	}
	return s, span, nil
}

func checkCopilotCall(c *copilotCall) error {
	for _, f := range []struct {
		name    string
		missing bool
	}{{"start_time", c.StartTime == nil}, {"end_time", c.EndTime == nil}, {"input_tokens", c.InputTokens == nil}, {"output_tokens", c.OutputTokens == nil}} {
		if f.missing {
			return fmt.Errorf("missing %q", f.name)
		}
	}
	switch {
	case *c.InputTokens < 0 || *c.OutputTokens < 0 || (c.CachedTokens != nil && *c.CachedTokens < 0):
		return fmt.Errorf("negative token count")
	case *c.EndTime < *c.StartTime:
		return fmt.Errorf("end_time before start_time")
	}
	if err := checkTokens("output_tokens", *c.OutputTokens); err != nil {
		return err
	}
	if b := c.ToolBatch; b != nil {
		total := 0
		for k, t := range b.Tools {
			if t.ResultTokens < 0 {
				return fmt.Errorf("tool_batch.tools[%d]: negative result_tokens", k)
			}
			total += t.ResultTokens
			if err := checkTokens("tool results", total); err != nil {
				return err
			}
		}
	}
	return checkTokens("input_tokens", *c.InputTokens)
}

// copilotGrowth fills what a later call adds to the history: the previous
// call's tool results, the new turn's user message, or the prompt's growth.
func copilotGrowth(call *agentCall, system, in, planned int, batch *copilotBatch, newTurn bool, userTokens *int) {
	switch {
	case batch != nil && len(batch.Tools) > 0:
		for _, t := range batch.Tools {
			call.tools = append(call.tools, t.ResultTokens)
		}
	case newTurn && userTokens != nil && *userTokens >= 0:
		call.user = *userTokens
	case in >= planned:
		call.user = in - planned
	default:
		call.reset, call.user = true, max(in-system, 0)
	}
}

// copilotSpawn links session i to its parent: spawned after the parent's
// call parent_call_id (or, without one, after the parent's last call that
// began before it) and joined before the parent's next call.
func copilotSpawn(a *agentTrace, lines []copilotLine, index map[string]int, bounds [][2]time.Duration, i int) error {
	cs := lines[i].s
	if cs.ParentSessionID == "" {
		return nil
	}
	p, ok := index[cs.ParentSessionID]
	switch {
	case !ok:
		return fmt.Errorf("parent_session_id %q is not a session of the trace", cs.ParentSessionID)
	case p == i:
		return fmt.Errorf("the session is its own parent")
	}
	for q, depth := p, 0; lines[q].s.ParentSessionID != ""; depth++ {
		q = index[lines[q].s.ParentSessionID]
		if q == i || depth > len(lines) {
			return fmt.Errorf("its parents form a cycle")
		}
	}
	// The parent's calls in order, with their ids and times.
	slot, k := -1, 0
	var after time.Duration
	var callStarts []time.Duration
	for _, turn := range lines[p].s.Turns {
		for _, c := range turn.LLMCalls {
			k++
			callStarts = append(callStarts, time.Duration(*c.StartTime))
			switch {
			case cs.ParentCallID != "" && c.CallID == cs.ParentCallID:
				slot, after = k, time.Duration(*c.EndTime)
			case cs.ParentCallID == "" && time.Duration(*c.StartTime) <= bounds[i][0]:
				slot, after = k, time.Duration(*c.EndTime)
			}
		}
	}
	if slot < 0 {
		if cs.ParentCallID != "" {
			return fmt.Errorf("parent_call_id %q is not a call of session %q", cs.ParentCallID, cs.ParentSessionID)
		}
		slot = 0
		after = bounds[p][0]
	}
	a.sessions[i].parent = p
	delay := max(0, bounds[i][0]-after)
	if delay > seconds(maxTraceSeconds) {
		delay = seconds(maxTraceSeconds)
	}
	ps := &a.sessions[p]
	ps.spawns[slot] = append(ps.spawns[slot], agentSpawn{session: i, delay: delay})
	// The parent's next call waits for the subagent: its gap counts from
	// the later of its previous reply's end and the subagent's.
	if slot < len(ps.calls) && slot > 0 {
		ps.calls[slot].gap = min(ps.calls[slot].gap, max(0, callStarts[slot]-bounds[i][1]))
	}
	return nil
}
