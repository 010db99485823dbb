package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestParseCopilotPublished reads sessions in the schema the GitHub Copilot
// coding-agent traces were published in: calls from "tokens" and
// "timestamp" + duration_ms, the system prompt from the first call's system
// segments, a tool batch matched by request_id (or, without one, by time)
// sized as the next call's growth over its function calls, a shrunk prompt
// starting over, helper calls without token accounting and sessions of
// nothing but them left out, timestamps with seven fractional digits and
// no zone.
func TestParseCopilotPublished(t *testing.T) {
	t.Parallel()
	const trace = `{"session_id": "a", "date": "2026-06-01", "turns": [
 {"turn_id": "t1", "llm_calls": [
  {"message_id": "m1", "timestamp": "2026-06-01T10:00:00.0000000Z", "duration_ms": 1000, "tokens": {"prompt": 1300, "completion": 50, "cached": 0},
   "message_metadata": [{"type": "System", "role": "system", "sequenceId": 0, "token_len": 1000}, {"type": "Tools", "role": "system", "sequenceId": 1, "token_len": 200}, {"type": "UserMessage", "role": "user", "sequenceId": 2, "token_len": 100}]},
  {"message_id": "helper", "timestamp": "2026-06-01T10:00:01.5Z", "duration_ms": 200, "tokens": {}},
  {"message_id": "m2", "timestamp": "2026-06-01T10:00:03Z", "duration_ms": 500, "tokens": {"prompt": 1653, "completion": 20, "cached": 1296}}],
  "tool_batches": [{"timestamp": "2026-06-01T10:00:01Z", "request_id": "m1", "function_calls": [{"name": "grep", "status": 1}, {"name": "view", "status": 2}]}]},
 {"turn_id": "t2", "llm_calls": [
  {"message_id": "m3", "timestamp": "2026-06-01T10:00:10.0000000", "duration_ms": 700, "tokens": {"prompt": 1700, "completion": 10}},
  {"message_id": "m4", "timestamp": "2026-06-01 10:00:12", "duration_ms": 0, "tokens": {"prompt": 1400, "completion": 5, "cached": 1200}}],
  "tool_batches": [{"timestamp": "2026-06-01T10:00:10.8", "request_id": "", "function_calls": [{"name": "bash"}]}]}]}
{"session_id": "helpers-only", "turns": [{"llm_calls": [{"message_id": "x", "timestamp": "2026-06-01T10:00:00Z", "tokens": {"completion": 3}}]}]}`
	a, err := parseCopilot("c.jsonl", strings.NewReader(strings.ReplaceAll(trace, "\n ", " ")))
	if err != nil {
		t.Fatal(err)
	}
	s := time.Second
	want := []agentSession{{name: "a", parent: -1, system: 1200, calls: []agentCall{
		{user: 100, output: 50, cached: 0},
		{gap: 2 * s, tools: []int{152, 151}, output: 20, cached: 1296}, // 1653 − 1300 − 50 over grep and view
		// The batch without a request_id began after m3: its one tool is
		// m4's growth, but m4 shrank (1400 < 1710), so it starts over.
		{gap: 6500 * time.Millisecond, user: 27, output: 10, cached: -1}, // a new turn: its growth as the user's message
		{gap: 1300 * time.Millisecond, reset: true, user: 200, output: 5, cached: 1200},
	}, spawns: [][]agentSpawn{nil, nil, nil, nil, nil}}}
	if d := cmp.Diff(want, a.sessions, cmp.AllowUnexported(agentSession{}, agentCall{}, agentSpawn{})); d != "" {
		t.Errorf("sessions (-want +got):\n%s", d)
	}
	// Every call's planned prompt is the trace's prompt tokens.
	rows := &agentRows{trace: a, text: agentText{seed: 1}}
	for i, in := range []int{1300, 1653, 1700, 1400} {
		if msgs, tokens, _ := rows.request(i); tokens != in || CountTokens(msgs) != in {
			t.Errorf("call %d: planned %d tokens (counted %d), the trace's prompt is %d", i, tokens, CountTokens(msgs), in)
		}
	}
	for _, tc := range []struct{ line, want string }{
		{`{"session_id": "a", "turns": [{"llm_calls": [{"tokens": {"prompt": 10}}]}]}`, `turns[0].llm_calls[0]: missing "timestamp"`},
		{`{"session_id": "a", "turns": [{"llm_calls": [{"timestamp": "2026-06-01T10:00:00Z", "duration_ms": -1, "tokens": {"prompt": 10}}]}]}`, `duration_ms: want milliseconds`},
		{`{"session_id": "a", "turns": [{"llm_calls": [{"timestamp": "June 1st", "tokens": {"prompt": 10}}]}]}`, `want an RFC 3339 time`},
	} {
		if _, err := parseCopilot("c.jsonl", strings.NewReader(tc.line)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.line, err, tc.want)
		}
	}
}

// TestCopilotPublishedExample: the example in the published schema reads
// as three sessions of eight calls, each planned at the trace's prompt.
func TestCopilotPublishedExample(t *testing.T) {
	t.Parallel()
	f, err := os.Open(filepath.Join("..", "scenarios", "agentic-copilot-azure.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := parseCopilot("agentic-copilot-azure.jsonl", f)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.describe(); !strings.HasPrefix(got, "3 sessions (0 subagents), 8 calls, 3 after tool results") {
		t.Errorf("describe: %s", got)
	}
	rows := &agentRows{trace: a, text: agentText{seed: 5}}
	for i, in := range []int{1400, 1800, 2245, 2445, 1250, 1770, 1500, 1230} {
		if _, tokens, _ := rows.request(i); tokens != in {
			t.Errorf("call %d: planned %d tokens, the trace's prompt is %d", i, tokens, in)
		}
	}
}
