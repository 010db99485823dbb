package workload

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/llmbench-org/llmbench/internal/inputfile"
)

// The AgentX/Weka agentic coding trace, as AIPerf's loader reads it
// (weka_trace_models.py, AIPerf PR #1165): one JSON object per session —
// a file holds one, or several one after the other (JSON lines) — with
// "id", "block_size", "tool_tokens", "system_tokens" and "requests": calls
// of type "n" (normal) or "s" (streamed) with "t" (seconds from the
// session's start), "in" and "out" (tokens), "hash_ids", "stop"
// ("tool_use" when the reply called tools), "api_time" (the server's
// seconds) and "think_time" (the client's delay before it, seconds), and
// markers of type "subagent" with "t", "agent_id", "duration_ms" and their
// own "requests". Fields llmbench does not use are read past.

type wekaSession struct {
	ID           string      `json:"id"`
	ToolTokens   int         `json:"tool_tokens"`
	SystemTokens int         `json:"system_tokens"`
	Requests     []wekaEntry `json:"requests"`
}

type wekaEntry struct {
	T         *float64 `json:"t"`
	Type      string   `json:"type"`
	In        *int     `json:"in"`
	Out       *int     `json:"out"`
	Stop      string   `json:"stop"`
	APITime   *float64 `json:"api_time"`
	ThinkTime *float64 `json:"think_time"`
	// A subagent marker's.
	AgentID      string      `json:"agent_id"`
	DurationMS   *float64    `json:"duration_ms"`
	ToolTokens   int         `json:"tool_tokens"`
	SystemTokens int         `json:"system_tokens"`
	Requests     []wekaEntry `json:"requests"`
}

// parseWeka reads a Weka trace: each session a root, its subagent markers
// sessions of their own. Sessions have no clock in common: each starts at
// the replay's start (its first call at its own "t").
func parseWeka(name string, r io.Reader) (*agentTrace, error) {
	rs := inputfile.NewRecords(r, name, inputfile.Data)
	dec := json.NewDecoder(rs)
	a := &agentTrace{}
	starts := map[int]time.Duration{}
	for n := 0; dec.More(); n++ {
		start := dec.InputOffset()
		rs.Mark(start)
		var ws wekaSession
		if err := dec.Decode(&ws); err != nil {
			return nil, fmt.Errorf("session %d: %w", n, jsonError(name, rs, start, err))
		}
		where := fmt.Sprintf("%s:%d: session %q", name, rs.LineAt(start), ws.ID)
		root := len(a.sessions)
		a.sessions = append(a.sessions, agentSession{}) // its subagents name it as their parent
		s, first, err := wekaCalls(a, ws.ID, -1, ws.SystemTokens+ws.ToolTokens, ws.Requests, root, where)
		if err != nil {
			return nil, err
		}
		a.sessions[root] = s
		starts[root] = first
	}
	if _, err := dec.Token(); err != io.EOF {
		rs.Mark(dec.InputOffset())
		return nil, jsonError(name, rs, dec.InputOffset(), err)
	}
	if err := a.finish(name, starts); err != nil {
		return nil, err
	}
	return a, nil
}

// wekaClock is a session's place on the trace's clock as its entries are read.
type wekaClock struct {
	prevEnd  float64 // the previous reply's end, seconds (its t plus api_time)
	joinEnd  float64 // the latest end of the subagents spawned since
	prevIn   int     // the previous call's prompt tokens
	prevOut  int
	prevTool bool // the previous reply called tools
}

// wekaCalls reads one session's entries; self is its index (a root's
// subagents are appended after it). first is its first call's t.
func wekaCalls(a *agentTrace, id string, parent, system int, entries []wekaEntry, self int, where string) (agentSession, time.Duration, error) {
	s := agentSession{name: id, parent: parent, system: max(system, 0), spawns: [][]agentSpawn{nil}}
	var clock wekaClock
	var first time.Duration
	for i, e := range entries {
		at := fmt.Sprintf("%s: requests[%d]", where, i)
		if e.T == nil {
			return s, 0, fmt.Errorf("%s: missing \"t\"", at)
		}
		if err := checkSeconds("t", *e.T); err != nil {
			return s, 0, fmt.Errorf("%s: %w", at, err)
		}
		switch e.Type {
		case "subagent":
			if parent >= 0 {
				return s, 0, fmt.Errorf("%s: a subagent inside a subagent (the format nests one level)", at)
			}
			if err := wekaSubagent(a, &s, &clock, e, self, at); err != nil {
				return s, 0, err
			}
		case "n", "s":
			call, err := wekaCall(&s, &clock, e, at)
			if err != nil {
				return s, 0, err
			}
			if len(s.calls) == 0 {
				first = seconds(*e.T)
			}
			s.calls = append(s.calls, call)
			s.spawns = append(s.spawns, nil)
		default:
			return s, 0, fmt.Errorf("%s: unknown type %q: want n, s or subagent", at, e.Type)
		}
	}
	if len(s.calls) == 0 {
		return s, 0, fmt.Errorf("%s: no call (no request of type n or s)", where)
	}
	return s, first, nil
}

func wekaSubagent(a *agentTrace, s *agentSession, clock *wekaClock, e wekaEntry, parent int, at string) error {
	if e.DurationMS != nil {
		if err := checkSeconds("duration_ms", *e.DurationMS/1000); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		clock.joinEnd = math.Max(clock.joinEnd, *e.T+*e.DurationMS/1000)
	}
	sub, _, err := wekaCalls(a, e.AgentID, parent, e.SystemTokens+e.ToolTokens, e.Requests, -1, at+" (subagent "+fmt.Sprintf("%q", e.AgentID)+")")
	if err != nil {
		return err
	}
	k := len(a.sessions)
	a.sessions = append(a.sessions, sub)
	slot := len(s.spawns) - 1 // after the last call read
	s.spawns[slot] = append(s.spawns[slot], agentSpawn{session: k, delay: seconds(math.Max(0, *e.T-clock.prevEnd))})
	return nil
}

// wekaCall turns a call entry into a call: the prompt's growth since the
// previous call and its reply is the tool results (after a reply that
// called tools) or the user's message; a prompt that shrank starts over.
func wekaCall(s *agentSession, clock *wekaClock, e wekaEntry, at string) (agentCall, error) {
	switch {
	case e.In == nil:
		return agentCall{}, fmt.Errorf("%s: missing \"in\"", at)
	case e.Out == nil:
		return agentCall{}, fmt.Errorf("%s: missing \"out\"", at)
	case *e.In < 0 || *e.Out < 0:
		return agentCall{}, fmt.Errorf("%s: negative token count", at)
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"api_time", e.APITime}, {"think_time", e.ThinkTime}} {
		if f.v != nil {
			if err := checkSeconds(f.name, *f.v); err != nil {
				return agentCall{}, fmt.Errorf("%s: %w", at, err)
			}
		}
	}
	if err := checkTokens("in", *e.In); err != nil {
		return agentCall{}, fmt.Errorf("%s: %w", at, err)
	}
	if err := checkTokens("out", *e.Out); err != nil {
		return agentCall{}, fmt.Errorf("%s: %w", at, err)
	}
	in, t := *e.In, *e.T
	c := agentCall{output: max(*e.Out, 1), cached: -1}
	if len(s.calls) == 0 {
		s.system = min(s.system, in)
		c.user = in - s.system
	} else {
		switch {
		case e.ThinkTime != nil:
			c.gap = seconds(*e.ThinkTime)
		default:
			c.gap = seconds(math.Max(0, t-math.Max(clock.prevEnd, clock.joinEnd)))
		}
		planned := clock.prevIn + clock.prevOut
		switch grow := in - planned; {
		case grow < 0:
			c.reset, c.user = true, max(in-s.system, 0)
		case clock.prevTool:
			c.tools = []int{grow}
		default:
			c.user = grow
		}
	}
	clock.prevIn = max(in, s.system)
	clock.prevOut = c.output
	clock.prevTool = e.Stop == "tool_use"
	clock.prevEnd, clock.joinEnd = t, 0
	if e.APITime != nil {
		clock.prevEnd += *e.APITime
	}
	return c, nil
}

// checkSeconds refuses a time that is not a finite number of seconds from
// 0 to maxTraceSeconds.
func checkSeconds(field string, v float64) error {
	if !(v >= 0 && v <= maxTraceSeconds) { // NaN is neither
		return fmt.Errorf("%s: want seconds from 0 to %g, got %g", field, float64(maxTraceSeconds), v)
	}
	return nil
}

func seconds(v float64) time.Duration { return time.Duration(math.Round(v * 1e9)) }
