package client

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// toolEvent is a chunk carrying one tool-call delta.
func toolEvent(id string, index int, callID, name, args string) string {
	return fmt.Sprintf(`data: {"id":%q,"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":%q}}]},"finish_reason":null}]}`+"\n\n",
		id, index, callID, name, args)
}

// TestDoReplyThreadsTheEngineReply: DoReply returns the text the stream
// carried and its tool calls merged delta by delta; a session's requests
// carry X-Session-Id and the configured header, and the record keeps the
// session; the body carries a history's tool calls and tool results.
func TestDoReplyThreadsTheEngineReply(t *testing.T) {
	id := "r1"
	events := []string{roleEvent(id), contentEvent(id, "Let me "), contentEvent(id, "look."),
		toolEvent(id, 0, "call_a", "grep", `{"pat`), toolEvent(id, 0, "", "", `tern":"x"}`),
		toolEvent(id, 1, "call_b", "view", `{}`), finishEvent(id, "tool_calls"), usageEvent(id, 5, 9, 0), doneEvent}
	h, got := recording(t, streamOf(events...))
	srv := serve(t, h)
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.SessionHeader = "X-Affinity" })
	r := request(id)
	r.Session = "run-1-s3"
	r.Messages = []Message{
		{Role: "user", Content: "fix it"},
		{Role: "assistant", Content: "", ToolCalls: []ToolCall{{ID: "call_0", Type: "function", Function: ToolFunction{Name: "bash", Arguments: "{}"}}}},
		{Role: "tool", Content: "ok", ToolCallID: "call_0"},
	}
	rec, reply := c.DoReply(context.Background(), r)
	if !rec.OK() || rec.Session != "run-1-s3" {
		t.Fatalf("record %+v", rec)
	}
	want := &Reply{Content: "Let me look.", ToolCalls: []ToolCall{
		{ID: "call_a", Type: "function", Function: ToolFunction{Name: "grep", Arguments: `{"pattern":"x"}`}},
		{ID: "call_b", Type: "function", Function: ToolFunction{Name: "view", Arguments: `{}`}},
	}}
	if d := cmp.Diff(want, reply); d != "" {
		t.Errorf("reply (-want +got):\n%s", d)
	}
	sent := <-got
	if sent.header.Get("X-Session-Id") != "run-1-s3" || sent.header.Get("X-Affinity") != "run-1-s3" {
		t.Errorf("session headers %v", sent.header)
	}
	msgs := sent.body["messages"].([]any)
	asst, tool := msgs[1].(map[string]any), msgs[2].(map[string]any)
	if calls := asst["tool_calls"].([]any); len(calls) != 1 || calls[0].(map[string]any)["id"] != "call_0" || tool["tool_call_id"] != "call_0" {
		t.Errorf("history sent as %v", msgs)
	}
	if _, has := msgs[0].(map[string]any)["tool_calls"]; has {
		t.Errorf("a plain message carries tool_calls: %v", msgs[0])
	}

	// Do keeps no reply and sends no session header without a session.
	h2, got2 := recording(t, streamOf(events...))
	srv2 := serve(t, h2)
	c2 := newTestClient(t, srv2.URL, nil)
	if rec := c2.Do(context.Background(), request("r2")); !rec.OK() || rec.Session != "" {
		t.Fatalf("record %+v", rec)
	}
	if s := (<-got2).header; s.Get("X-Session-Id") != "" {
		t.Errorf("X-Session-Id %q without a session", s.Get("X-Session-Id"))
	}
}

// TestDoReplyWhole: a non-streamed response's message is the reply; a
// failed request has none.
func TestDoReplyWhole(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"text","text":"all "},{"type":"text","text":"done"}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`)
	}))
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.NoStream = true })
	rec, reply := c.DoReply(context.Background(), request("w"))
	if !rec.OK() || reply == nil || reply.Content != "all done" || reply.ToolCalls != nil {
		t.Fatalf("record %+v, reply %+v", rec, reply)
	}
	bad := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusBadRequest) }))
	if rec, reply := newTestClient(t, bad.URL, nil).DoReply(context.Background(), request("b")); rec.OK() || reply != nil {
		t.Errorf("a failed request's reply: %+v", reply)
	}
}

// TestDecodeReply reads what engines write: text in parts, calls without
// an index (their position), lines that are not chunks, other choices.
func TestDecodeReply(t *testing.T) {
	for _, tc := range []struct {
		lines string
		want  Reply
	}{
		{"", Reply{}},
		{`{"choices":[{"index":0,"text":"a"}]}` + "\n" + `{"choices":[{"index":0,"text":"b"}]}`, Reply{Content: "ab"}},
		{`{"choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"}}]}`, Reply{Content: "mine"}},
		{`not json` + "\n" + `{"choices":[{"delta":{"content":null,"tool_calls":[{"id":"c","function":{"name":"f","arguments":"1"}}]}}]}`,
			Reply{ToolCalls: []ToolCall{{ID: "c", Type: "function", Function: ToolFunction{Name: "f", Arguments: "1"}}}}},
		{`{"choices":[{"delta":{"tool_calls":[{"index":99,"id":"far"}]}}]}`, Reply{}},
	} {
		if d := cmp.Diff(&tc.want, decodeReply([]byte(tc.lines))); d != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.lines, d)
		}
	}
}
