package workload

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// The GitHub Copilot coding-agent traces as published (Azure Public
// Dataset, "GitHub Copilot Coding Agent Traces 2026", June 1–7 2026:
// GitHubCopilotCodingAgentDataset2026.md and
// analysis/GitHubCopilotCodingAgents/schema.json in Azure/AzurePublicDataset,
// release ghcp-coding-agent-2026; decision 1600). A shard line is a session:
//
//	{"session_id": "…", "date": "2026-06-01",
//	 "turns": [{"turn_id": "…",
//	            "llm_calls": [{"message_id": "…", "timestamp": "2026-06-01T10:00:00.000Z",
//	                           "duration_ms": 1800.5, "initiator_type": "user", "model": "Model A",
//	                           "result": "Success", "status_code": "OK",
//	                           "tokens": {"total": 1530, "prompt": 1490, "completion": 40, "cached": 1200, "cached_pct": 80.5},
//	                           "message_metadata": [{"type": "System", "role": "system", "sequenceId": 0, "token_len": 900}, …]}],
//	            "tool_batches": [{"timestamp": …, "duration_ms": 350, "auto_continue": true, "result": "…",
//	                              "request_id": "<the message_id of the call whose reply ran it>",
//	                              "function_calls": [{"name": "bash", "status": 1, "duration_ms": 340}]}]}]}
//
// It is metadata only: no text, no tool output sizes of their own, no
// subagent links. parseCopilot reads such a line through fromPublished,
// which renders it as the fields copilotCalls reads: a call's prompt,
// completion and cached tokens from "tokens", its start from "timestamp"
// and its end duration_ms later (as the publisher's trace_loader.py
// reads them), its id from "message_id"; the system prompt is the first
// call's "system" segments; a tool batch answers the call its request_id
// names, and its results are the next call's growth, shared among its
// function calls. Calls without token accounting (the publisher's helper
// calls have no "prompt") are left out.

type copilotTokens struct {
	Prompt     *int `json:"prompt"`
	Completion *int `json:"completion"`
	Cached     *int `json:"cached"`
}

type copilotSegment struct {
	Role     string `json:"role"`
	TokenLen int    `json:"token_len"`
}

type copilotToolBatch struct {
	Timestamp     *copilotTime `json:"timestamp"`
	RequestID     string       `json:"request_id"`
	FunctionCalls []struct {
		Name string `json:"name"`
	} `json:"function_calls"`
}

// published reports whether the session is written in the published
// names (any call has "tokens" or "timestamp").
func (s *copilotSession) published() bool {
	for _, t := range s.Turns {
		for _, c := range t.LLMCalls {
			if c.Tokens != nil || c.Timestamp != nil {
				return true
			}
		}
	}
	return false
}

// fromPublished renders a session of the published schema as the fields
// copilotCalls reads (see above); a session in llmbench's own rendering is
// left as it is. empty is true for a published session without a call that
// has token accounting: nothing of it can be replayed, and the reader skips
// it rather than refuse a shard for it.
func (s *copilotSession) fromPublished() (empty bool, err error) {
	if !s.published() {
		return false, nil
	}
	var flat []*copilotCall
	turnOf := map[*copilotCall]int{}
	for ti := range s.Turns {
		t := &s.Turns[ti]
		kept := make([]copilotCall, 0, len(t.LLMCalls))
		for ci := range t.LLMCalls {
			c := t.LLMCalls[ci]
			if c.Tokens == nil || c.Tokens.Prompt == nil || *c.Tokens.Prompt <= 0 {
				continue // a helper call without token accounting
			}
			if err := c.renderPublished(); err != nil {
				return false, fmt.Errorf("turns[%d].llm_calls[%d]: %w", ti, ci, err)
			}
			kept = append(kept, c)
		}
		slices.SortStableFunc(kept, func(a, b copilotCall) int { return cmp.Compare(*a.StartTime, *b.StartTime) })
		t.LLMCalls = kept
		for ci := range t.LLMCalls {
			flat = append(flat, &t.LLMCalls[ci])
			turnOf[&t.LLMCalls[ci]] = ti
		}
	}
	if len(flat) == 0 {
		return true, nil
	}
	if s.SystemTokens == 0 {
		for _, seg := range flat[0].Metadata {
			if seg.Role == "system" && seg.TokenLen > 0 {
				s.SystemTokens += seg.TokenLen
			}
		}
	}
	used := map[*copilotToolBatch]bool{}
	for i, c := range flat[:max(len(flat)-1, 0)] {
		b := s.batchOf(c, turnOf[c], *flat[i+1].StartTime, used)
		if b == nil {
			continue
		}
		used[b] = true
		growth := *flat[i+1].InputTokens - *c.InputTokens - max(*c.OutputTokens, 1)
		if n := len(b.FunctionCalls); n > 0 && growth >= 0 {
			c.ToolBatch = &copilotBatch{}
			for k, f := range b.FunctionCalls {
				share := growth / n
				if k < growth%n {
					share++
				}
				c.ToolBatch.Tools = append(c.ToolBatch.Tools, struct {
					Name         string `json:"name"`
					ResultTokens int    `json:"result_tokens"`
				}{f.Name, share})
			}
		}
	}
	return false, nil
}

// renderPublished fills a published call's rendered fields.
func (c *copilotCall) renderPublished() error {
	if c.Timestamp == nil {
		return fmt.Errorf("missing \"timestamp\"")
	}
	d := 0.0
	if c.DurationMS != nil {
		d = *c.DurationMS
	}
	if !(d >= 0 && d <= maxTraceSeconds*1000) { // NaN is neither
		return fmt.Errorf("duration_ms: want milliseconds from 0 to %g, got %g", float64(maxTraceSeconds)*1000, d)
	}
	start, end := *c.Timestamp, *c.Timestamp+copilotTime(seconds(d/1000))
	out := 0
	if c.Tokens.Completion != nil {
		out = *c.Tokens.Completion
	}
	c.StartTime, c.EndTime, c.InputTokens, c.OutputTokens, c.CachedTokens = &start, &end, c.Tokens.Prompt, &out, c.Tokens.Cached
	if c.CallID == "" {
		c.CallID = c.MessageID
	}
	return nil
}

// batchOf is the tool batch that c's reply ran: the one whose request_id
// is c's message_id, else the first of its turn not yet taken that began
// between c's start and the next call's.
func (s *copilotSession) batchOf(c *copilotCall, turn int, next copilotTime, used map[*copilotToolBatch]bool) *copilotToolBatch {
	if c.MessageID != "" {
		for ti := range s.Turns {
			for bi := range s.Turns[ti].ToolBatches {
				if b := &s.Turns[ti].ToolBatches[bi]; b.RequestID == c.MessageID && !used[b] {
					return b
				}
			}
		}
	}
	for bi := range s.Turns[turn].ToolBatches {
		b := &s.Turns[turn].ToolBatches[bi]
		if !used[b] && b.Timestamp != nil && *b.Timestamp >= *c.StartTime && *b.Timestamp < next {
			return b
		}
	}
	return nil
}

// copilotTimeLayouts are the timestamp forms a trace may use besides
// RFC 3339: the published shards' ISO 8601 with up to nine fractional
// digits, with or without a zone (UTC when none).
var copilotTimeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"}
