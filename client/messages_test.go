package client

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/internal/race"
)

// msgEvent is one Messages API event as the API frames it.
func msgEvent(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

func msgStart(id string, input, cacheRead int) string {
	return msgEvent("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":%q,"type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":%d,"output_tokens":1}}}`, id, input, cacheRead))
}

func msgBlockStart(index int, block string) string {
	return msgEvent("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, index, block))
}

func msgDelta(index int, delta string) string {
	return msgEvent("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":%s}`, index, delta))
}

func msgBlockStop(index int) string {
	return msgEvent("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
}

func msgEnd(stopReason string, output int) string {
	return msgEvent("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stopReason, output))
}

var msgStop = msgEvent("message_stop", `{"type":"message_stop"}`)

// msgStream is a whole stream: thinking tokens, then text tokens, each a
// delta of its own, pings between.
func msgStream(id string, thinking, text int, stopReason string) string {
	var b strings.Builder
	b.WriteString(msgStart(id, 20, 8))
	b.WriteString(msgEvent("ping", `{"type": "ping"}`))
	index := 0
	if thinking > 0 {
		b.WriteString(msgBlockStart(0, `{"type":"thinking","thinking":"","signature":""}`))
		for i := range thinking {
			b.WriteString(msgDelta(0, fmt.Sprintf(`{"type":"thinking_delta","thinking":"t%d "}`, i)))
		}
		b.WriteString(msgDelta(0, `{"type":"signature_delta","signature":"c2ln"}`) + msgBlockStop(0))
		index = 1
	}
	b.WriteString(msgBlockStart(index, `{"type":"text","text":""}`))
	for i := range text {
		b.WriteString(msgDelta(index, fmt.Sprintf(`{"type":"text_delta","text":"w%d "}`, i)))
	}
	b.WriteString(msgBlockStop(index) + msgEnd(stopReason, thinking+text) + msgStop)
	return b.String()
}

func messagesClient(t *testing.T, url string, edit func(*Config)) *Client {
	t.Helper()
	return newTestClient(t, url, func(cfg *Config) {
		cfg.Endpoint = endpoints.Messages
		cfg.APIKey = "sk-test"
		if edit != nil {
			edit(cfg)
		}
	})
}

// TestMessagesRequest: the request is the API's: POST /v1/messages, the
// system messages as "system", max_tokens from the request, no
// stream_options (IncludeUsage is set), the version header and the key as
// x-api-key and as a bearer token.
func TestMessagesRequest(t *testing.T) {
	t.Parallel()
	h, got := recording(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" {
			t.Errorf("path %s", r.URL.Path)
		}
		writeEvents(w, msgStream("msg_1", 0, 3, "end_turn"))
	})
	srv := serve(t, h)
	c := messagesClient(t, srv.URL, nil)
	r := request("m1")
	r.Messages = []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hello"}, {Role: "assistant", Content: "hi"}, {Role: "user", Content: "go"}}
	rec := c.Do(t.Context(), r)
	wantClass(t, rec, ErrNone)
	sent := <-got
	b, h2 := sent.body, sent.header
	msgs, _ := b["messages"].([]any)
	if b["system"] != "be brief" || len(msgs) != 3 || b["max_tokens"] != 16.0 || b["stream"] != true || b["model"] != "test-model" || b["rid"] != "m1" {
		t.Errorf("body %v", b)
	}
	if _, ok := b["stream_options"]; ok {
		t.Errorf("stream_options sent: %v", b["stream_options"])
	}
	if h2.Get("anthropic-version") != "2023-06-01" || h2.Get("x-api-key") != "sk-test" || h2.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("headers %v", h2)
	}

	// No system message: no "system" member.
	c.Do(t.Context(), request("m2"))
	if b := (<-got).body; b["system"] != nil {
		t.Errorf("system %v sent for a request without one", b["system"])
	}
}

// TestMessagesStreamRecord: a stream's record is chat's: the first token
// is the first thinking delta, the first content the first text delta,
// one chunk per delta carrying output (the signature and the block events
// carry none), the usage from message_start and message_delta merged (every
// input token, the cached among them), the stop reason as a finish reason.
func TestMessagesStreamRecord(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stop, finish string
	}{
		{"end_turn", "stop"}, {"max_tokens", "length"}, {"stop_sequence", "stop"}, {"tool_use", "tool_calls"}, {"refusal", "refusal"},
	} {
		srv := serve(t, streamOf(msgStream("msg_1", 2, 3, tc.stop)))
		rec := messagesClient(t, srv.URL, nil).Do(t.Context(), request("s"))
		wantClass(t, rec, ErrNone)
		checkTimeline(t, rec)
		if rec.FinishReason != tc.finish || rec.ServerID != "msg_1" || len(rec.Chunks) != 5 || rec.OutputTokens != 5 ||
			rec.PromptTokens != 28 || rec.CachedTokens != 8 || rec.TokenSource != TokensFromUsage || rec.NoDone || len(rec.Violations) != 0 {
			t.Errorf("%s: %+v", tc.stop, rec)
		}
		if rec.FirstToken != rec.Chunks[0].At || rec.FirstContent != rec.Chunks[2].At {
			t.Errorf("%s: first token %v, first content %v, chunks %v", tc.stop, rec.FirstToken, rec.FirstContent, rec.Chunks)
		}
	}
}

// TestMessagesStreamEnds: how a stream ends decides its record.
func TestMessagesStreamEnds(t *testing.T) {
	t.Parallel()
	body := msgStream("msg_1", 0, 3, "end_turn")
	cut := strings.TrimSuffix(body, msgStop)
	tool := msgStart("msg_t", 5, 0) + msgBlockStart(0, `{"type":"tool_use","id":"toolu_1","name":"f","input":{}}`) +
		msgDelta(0, `{"type":"input_json_delta","partial_json":""}`) + msgDelta(0, `{"type":"input_json_delta","partial_json":"{\"a\":"}`) +
		msgDelta(0, `{"type":"input_json_delta","partial_json":"1}"}`) + msgBlockStop(0) + msgEnd("tool_use", 4) + msgStop
	// A gateway that sends data lines only: the data's type says the event.
	unnamed := strings.NewReplacer("event: message_start\n", "", "event: content_block_start\n", "", "event: content_block_delta\n", "",
		"event: content_block_stop\n", "", "event: message_delta\n", "", "event: message_stop\n", "", "event: ping\n", "").Replace(body)
	for _, tc := range []struct {
		name, body string
		class      ErrorClass
		chunks     int
		check      func(Record) bool
		wantError  string
	}{
		{"whole", body, ErrNone, 3, func(r Record) bool { return !r.NoDone && r.OutputTokens == 3 }, ""},
		{"no message_stop: ends at the body's end", cut, ErrNone, 3, func(r Record) bool { return r.NoDone && r.OutputTokens == 3 }, ""},
		{"tool input", tool, ErrNone, 2, func(r Record) bool { return r.FinishReason == "tool_calls" && r.FirstContent == 0 && r.FirstToken != 0 }, ""},
		{"data lines only", unnamed, ErrNone, 3, func(r Record) bool { return r.OutputTokens == 3 && r.FinishReason == "stop" }, ""},
		{"message_stop before a stop reason", msgStart("m", 1, 0) + msgDelta(0, `{"type":"text_delta","text":"a"}`) + msgStop,
			ErrStreamBroken, 1, nil, "message_stop but no stop_reason"},
		{"error event mid-stream", msgStart("m", 1, 0) + msgDelta(0, `{"type":"text_delta","text":"a"}`) +
			msgEvent("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			ErrStreamBroken, 1, nil, "Overloaded"},
		{"error as a typed data line", msgStart("m", 1, 0) + `data: {"type":"error","error":{"type":"api_error","message":"boom"}}` + "\n\n",
			ErrStreamBroken, 0, nil, "boom"},
		{"cut mid-stream", msgStart("m", 1, 0) + msgDelta(0, `{"type":"text_delta","text":"a"}`), ErrStreamBroken, 1, nil, "without"},
		{"malformed event", msgStart("m", 1, 0) + msgEvent("content_block_delta", `{"type":"content_block_delta","delta":{"text":7}}`),
			ErrMalformedChunk, 0, nil, "delta text is not a string"},
		{"unknown events are skipped", msgStart("m", 1, 0) + msgEvent("future_event", `not json`) + msgDelta(0, `{"type":"text_delta","text":"a"}`) +
			msgEnd("end_turn", 1) + msgStop, ErrNone, 1, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, streamOf(tc.body))
			rec := messagesClient(t, srv.URL, nil).Do(t.Context(), request("e"))
			wantClass(t, rec, tc.class)
			checkTimeline(t, rec)
			if len(rec.Chunks) != tc.chunks || tc.check != nil && !tc.check(rec) || !strings.Contains(rec.Error, tc.wantError) {
				t.Errorf("%+v", rec)
			}
		})
	}
}

// TestMessagesWhole: a non-streamed message: its usage and stop reason,
// no timeline; an error object is the server's error.
func TestMessagesWhole(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		class      ErrorClass
		check      func(Record) bool
	}{
		{"message", `{"id":"msg_w","type":"message","role":"assistant","model":"m","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"text","text":"hi"}],"stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":2,"cache_read_input_tokens":4,"output_tokens":6}}`,
			ErrNone, func(r Record) bool {
				return r.FinishReason == "length" && r.PromptTokens == 9 && r.CachedTokens == 4 && r.OutputTokens == 6 && r.ServerID == "msg_w" && r.FirstToken == 0
			}},
		{"no stop reason", `{"id":"msg_w","type":"message","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":0}}`, ErrStreamBroken, nil},
		{"error", `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}`, ErrStreamBroken,
			func(r Record) bool { return strings.Contains(r.Error, "max_tokens: Field required") }},
	} {
		srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(tc.body))
		}))
		rec := messagesClient(t, srv.URL, func(cfg *Config) { cfg.NoStream = true }).Do(t.Context(), request("w"))
		wantClass(t, rec, tc.class)
		if tc.check != nil && !tc.check(rec) {
			t.Errorf("%s: %+v", tc.name, rec)
		}
	}
}

// TestMessagesUsageMerge: message_delta's counts add to message_start's,
// a count it leaves out keeping its value; a count that goes back is
// flagged and the usage not used.
func TestMessagesUsageMerge(t *testing.T) {
	t.Parallel()
	body := msgStart("m", 10, 5) + msgDelta(0, `{"type":"text_delta","text":"a"}`) + msgDelta(0, `{"type":"text_delta","text":"b"}`) +
		msgEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2,"cache_creation_input_tokens":3}}`) + msgStop
	rec := messagesClient(t, serve(t, streamOf(body)).URL, nil).Do(t.Context(), request("u"))
	wantClass(t, rec, ErrNone)
	if rec.PromptTokens != 18 || rec.CachedTokens != 5 || rec.OutputTokens != 2 || rec.TokenSource != TokensFromUsage {
		t.Errorf("merged usage: %+v", rec)
	}
	back := msgStart("m", 10, 5) + msgDelta(0, `{"type":"text_delta","text":"a"}`) +
		msgEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1,"input_tokens":2}}`) + msgStop
	rec = messagesClient(t, serve(t, streamOf(back)).URL, nil).Do(t.Context(), request("b"))
	if !rec.HasViolation(ViolationUsageBackwards) || rec.TokenSource != TokensFromChunks {
		t.Errorf("input going back: %+v", rec)
	}
}

// TestMessagesPerChunkAllocatesNothing: the Messages stream's per-event
// path allocates nothing either (decision 0204).
func TestMessagesPerChunkAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts under -race do not describe the product (perchunk_test.go); the normal build checks them")
	}
	allocs := func(deltas int) float64 {
		c := messagesClient(t, "http://engine.test", func(cfg *Config) {
			cfg.HTTPClient = &http.Client{Transport: bodyTransport(msgStream("msg_1", deltas/2, deltas/2, "max_tokens"))}
		})
		r := request("alloc")
		r.MaxTokens = 1024
		var rec Record
		n := testing.AllocsPerRun(20, func() { rec = c.Do(t.Context(), r) })
		if !rec.OK() {
			t.Fatalf("%s: %s", rec.ErrorClass, rec.Error)
		}
		return n
	}
	if short, long := allocs(16), allocs(1024); long > short {
		t.Errorf("a stream of 1024 deltas allocates %.0f times, one of 16 %.0f: %.3f allocations per event, want 0", long, short, (long-short)/(1024-16))
	}
}

// BenchmarkMessagesDecode is BenchmarkChunkDecode for a Messages API
// text_delta event, as vLLM frames it: the event read and decoded.
func BenchmarkMessagesDecode(b *testing.B) {
	event := []byte(msgDelta(1, `{"type":"text_delta","text":"tok "}`))
	r := bytes.NewReader(event)
	sr := newSSEReader(r)
	var dec chunkDecoder
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(event)
		sr.r, sr.w, sr.rerr = 0, 0, nil
		ev, err := sr.next()
		if err != nil || string(ev.typ) != evContentBlockDelta {
			b.Fatal("not a content_block_delta event", err)
		}
		m, err := dec.decodeMessages(ev.data)
		if err != nil || !m.v.content {
			b.Fatal("not a text delta", err)
		}
	}
}
