package workload

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestParseWeka reads a session with a subagent the way the format says:
// each call's prompt grows by tool results after a reply that called tools
// and by the user's words otherwise, a prompt that shrank starts over, the
// gap to a call is its think_time or the time from the previous reply's
// end (t + api_time) and the subagents' (t + duration_ms), and the
// subagent is launched after the call before its marker.
func TestParseWeka(t *testing.T) {
	const trace = `{"id": "a", "system_tokens": 70, "tool_tokens": 30, "requests": [
 {"t": 10, "type": "s", "in": 150, "out": 20, "stop": "tool_use", "api_time": 1},
 {"t": 12, "type": "n", "in": 200, "out": 10, "stop": "end_turn", "api_time": 0.5},
 {"t": 13, "type": "subagent", "agent_id": "x", "duration_ms": 3000, "system_tokens": 40, "requests": [
   {"t": 13.2, "type": "n", "in": 60, "out": 5, "stop": "tool_use", "api_time": 0.2},
   {"t": 14, "type": "n", "in": 90, "out": 5, "think_time": 0.25}]},
 {"t": 17, "type": "s", "in": 260, "out": 15, "think_time": 2},
 {"t": 20, "type": "s", "in": 180, "out": 5}]}
{"id": "b", "requests": [{"t": 0.5, "type": "n", "in": 10, "out": 2}]}`
	a, err := parseWeka("w.jsonl", strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	s := time.Second
	want := []agentSession{
		{name: "a", parent: -1, system: 100, calls: []agentCall{
			{user: 50, output: 20, cached: -1},
			{gap: 1 * s, tools: []int{30}, output: 10, cached: -1},     // 200 − (150 + 20), after tool_use; 12 − (10 + 1)
			{gap: 2 * s, user: 50, output: 15, cached: -1},             // think_time wins
			{gap: 3 * s, reset: true, user: 80, output: 5, cached: -1}, // 180 < 260 + 15: starts over; 20 − 17
		}, spawns: [][]agentSpawn{nil, nil, {{session: 1, delay: s / 2}}, nil, nil}}, // 13 − (12 + 0.5)
		{name: "x", parent: 0, system: 40, calls: []agentCall{
			{user: 20, output: 5, cached: -1},
			{gap: s / 4, tools: []int{25}, output: 5, cached: -1},
		}, spawns: [][]agentSpawn{nil, nil, nil}},
		{name: "b", parent: -1, system: 0, calls: []agentCall{{user: 10, output: 2, cached: -1}}, spawns: [][]agentSpawn{nil, nil}},
	}
	if d := cmp.Diff(want, a.sessions, cmp.AllowUnexported(agentSession{}, agentCall{}, agentSpawn{})); d != "" {
		t.Errorf("sessions (-want +got):\n%s", d)
	}
	// Sessions have no clock in common: each session's first call goes at
	// its own t, the earliest at the replay's start (b at 0.5, a 9.5 s on).
	if d := cmp.Diff([]int{2, 0}, a.roots); d != "" || a.first[2] != 6 || a.calls != 7 ||
		!slices.Equal(a.starts, []time.Duration{0, 9500 * time.Millisecond}) {
		t.Errorf("roots %v, starts %v, first %v, calls %d", a.roots, a.starts, a.first, a.calls)
	}
}

// TestParseWekaStarts: the roots are replayed in the order of their first
// call's t.
func TestParseWekaStarts(t *testing.T) {
	a, err := parseWeka("w", strings.NewReader(`{"id":"late","requests":[{"t":3,"type":"n","in":5,"out":1}]}
{"id":"early","requests":[{"t":1,"type":"n","in":5,"out":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]int{1, 0}, a.roots); d != "" || a.starts[1] != 2*time.Second {
		t.Errorf("roots %v starts %v", a.roots, a.starts)
	}
}

// TestParseCopilot: a tool batch's results open the next call as tool
// messages of their sizes, a new turn opens with its user message, the
// gap is from the previous call's end (or the joined subagent's, when
// later), and a subagent is spawned after its parent_call_id.
func TestParseCopilot(t *testing.T) {
	const trace = `{"session_id": "p", "system_tokens": 100, "turns": [
 {"turn_id": "t1", "user_tokens": 20, "llm_calls": [
  {"call_id": "c1", "start_time": "2026-01-05T10:00:00Z", "end_time": "2026-01-05T10:00:01Z", "input_tokens": 120, "output_tokens": 10, "cached_tokens": 0,
   "tool_batch": {"tools": [{"name": "grep", "result_tokens": 30}, {"name": "task", "result_tokens": 7}]}},
  {"call_id": "c2", "start_time": "2026-01-05T10:00:06Z", "end_time": "2026-01-05T10:00:07Z", "input_tokens": 167, "output_tokens": 5, "cached_tokens": 130}]},
 {"turn_id": "t2", "user_tokens": 9, "llm_calls": [
  {"call_id": "c3", "start_time": 1767607210000, "end_time": 1767607211000, "input_tokens": 181, "output_tokens": 4}]}]}
{"session_id": "k", "parent_session_id": "p", "parent_call_id": "c1", "turns": [{"llm_calls": [
  {"start_time": "2026-01-05T10:00:01.500Z", "end_time": "2026-01-05T10:00:04Z", "input_tokens": 12, "output_tokens": 3}]}]}`
	// One session a line: the sessions above are written over several.
	a, err := parseCopilot("c.jsonl", strings.NewReader(strings.ReplaceAll(trace, "\n ", " ")))
	if err != nil {
		t.Fatal(err)
	}
	s := time.Second
	want := []agentSession{
		{name: "p", parent: -1, system: 100, calls: []agentCall{
			{user: 20, output: 10, cached: 0},
			{gap: 2 * s, tools: []int{30, 7}, output: 5, cached: 130}, // from the subagent's end (4 s), not c1's (1 s)
			{gap: 3 * s, user: 9, output: 4, cached: -1},              // epoch milliseconds: 10:00:10
		}, spawns: [][]agentSpawn{nil, {{session: 1, delay: s / 2}}, nil, nil}},
		{name: "k", parent: 0, system: 0, calls: []agentCall{{user: 12, output: 3, cached: -1}}, spawns: [][]agentSpawn{nil, nil}},
	}
	if d := cmp.Diff(want, a.sessions, cmp.AllowUnexported(agentSession{}, agentCall{}, agentSpawn{})); d != "" {
		t.Errorf("sessions (-want +got):\n%s", d)
	}
	rows := &agentRows{trace: a, text: agentText{seed: 1}}
	msgs, tokens, out := rows.request(1)
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if tokens != 167 || out != 5 || CountTokens(msgs) != 167 || strings.Join(roles, ",") != "system,user,assistant,tool,tool" ||
		msgs[3].ToolCallID != "call_0_1_0" || msgs[4].ToolCallID != "call_0_1_1" {
		t.Errorf("request 1: %d tokens (counted %d), output %d, roles %v, %+v", tokens, CountTokens(msgs), out, roles, msgs[3:])
	}
}

// TestAgenticErrors: each mistake names the file, the session and what is wrong.
func TestAgenticErrors(t *testing.T) {
	for _, tc := range []struct{ format, data, want string }{
		{"weka", `{"id":"a","requests":[{"type":"n","in":1,"out":1}]}`, `f:1: session "a": requests[0]: missing "t"`},
		{"weka", `{"id":"a","requests":[{"t":0,"type":"x","in":1,"out":1}]}`, `unknown type "x": want n, s or subagent`},
		{"weka", `{"id":"a","requests":[{"t":0,"type":"n","out":1}]}`, `requests[0]: missing "in"`},
		{"weka", `{"id":"a","requests":[{"t":-1,"type":"n","in":1,"out":1}]}`, `t: want seconds from 0 to 1e+09, got -1`},
		{"weka", `{"id":"a","requests":[{"t":0,"type":"n","in":20000000,"out":1}]}`, `in 20000000 is above the maximum`},
		{"weka", `{"id":"a","requests":[]}`, `f:1: session "a": no call`},
		{"weka", "{\"id\":\"a\",\n\"requests\":[1]}", `f:2: requests: want an object, got a JSON number`},
		{"weka", `{"id":"a","requests":[{"t":0,"type":"subagent","requests":[{"t":0,"type":"subagent"}]}]}`, `a subagent inside a subagent`},
		{"weka", ``, `f: no session with a call in the trace`},
		{"copilot", `{"turns":[]}`, `f:1: missing "session_id"`},
		{"copilot", `{"session_id":"a","turns":[{"llm_calls":[{"start_time":0,"end_time":1,"input_tokens":1}]}]}`, `turns[0].llm_calls[0]: missing "output_tokens"`},
		{"copilot", `{"session_id":"a","turns":[{"llm_calls":[{"start_time":5,"end_time":1,"input_tokens":1,"output_tokens":1}]}]}`, `end_time before start_time`},
		{"copilot", `{"session_id":"a","turns":[{"llm_calls":[{"start_time":"yesterday","end_time":1,"input_tokens":1,"output_tokens":1}]}]}`, `want an RFC 3339 time`},
		{"copilot", "{\"session_id\":\"a\",\"turns\":[{\"llm_calls\":[{\"start_time\":0,\"end_time\":1,\"input_tokens\":1,\"output_tokens\":1}]}]}\n{\"session_id\":\"a\"}", `f:2: session "a" appears twice`},
		{"copilot", `{"session_id":"a","parent_session_id":"z","turns":[{"llm_calls":[{"start_time":0,"end_time":1,"input_tokens":1,"output_tokens":1}]}]}`, `parent_session_id "z" is not a session of the trace`},
		{"copilot", `{"session_id":"a","parent_session_id":"a","turns":[{"llm_calls":[{"start_time":0,"end_time":1,"input_tokens":1,"output_tokens":1}]}]}`, `its own parent`},
		{"copilot", "{\"session_id\":\"a\",\"parent_session_id\":\"b\",\"turns\":[{\"llm_calls\":[{\"start_time\":0,\"end_time\":1,\"input_tokens\":1,\"output_tokens\":1}]}]}\n" +
			"{\"session_id\":\"b\",\"parent_session_id\":\"a\",\"turns\":[{\"llm_calls\":[{\"start_time\":0,\"end_time\":1,\"input_tokens\":1,\"output_tokens\":1}]}]}", `cycle`},
		{"copilot", "{\"session_id\":\"a\",\"turns\":[{\"llm_calls\":[{\"start_time\":0,\"end_time\":1,\"input_tokens\":1,\"output_tokens\":1}]}]}\n" +
			"{\"session_id\":\"b\",\"parent_session_id\":\"a\",\"parent_call_id\":\"nope\",\"turns\":[{\"llm_calls\":[{\"start_time\":0,\"end_time\":1,\"input_tokens\":1,\"output_tokens\":1}]}]}", `parent_call_id "nope" is not a call of session "a"`},
	} {
		_, err := parseAgentic(tc.format, strings.NewReader(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s:\n got %v\nwant …%s…", tc.format, tc.data, err, tc.want)
		}
	}
}

// TestShardAgentic: each shard's request limit is the calls of the session
// trees it sends, so together they send the whole trace.
func TestShardAgentic(t *testing.T) {
	a, err := parseWeka("w", strings.NewReader(`{"id":"a","requests":[{"t":0,"type":"n","in":5,"out":1},{"t":1,"type":"subagent","requests":[{"t":1,"type":"n","in":3,"out":1},{"t":2,"type":"n","in":5,"out":1}]},{"t":3,"type":"n","in":9,"out":1}]}
{"id":"b","requests":[{"t":1,"type":"n","in":5,"out":1}]}
{"id":"c","requests":[{"t":2,"type":"n","in":5,"out":1},{"t":3,"type":"n","in":8,"out":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ap := &agenticPlan{trace: a}
	if got := []int{ap.shardRequests(a.calls, 0, 2), ap.shardRequests(a.calls, 1, 2)}; !slices.Equal(got, []int{6, 1}) || a.calls != 7 {
		t.Errorf("shards' limits %v of %d calls; want a+its subagent and c (4+2), b (1)", got, a.calls)
	}
	if got := ap.shardRequests(3, 1, 2); got != 1 {
		t.Errorf("a cut limit of 3 over 2 shards: shard 1 gets %d", got)
	}
}
