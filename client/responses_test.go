package client

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/internal/race"
)

// Responses API streams as OpenAI and vLLM send them: `event: <type>` and
// data with the same type and a sequence number, no [DONE].

// respEv renders one event; data is the JSON after type and sequence_number.
func respEv(seq int, typ, rest string) string {
	return fmt.Sprintf("event: %s\ndata: {\"type\":%q,\"sequence_number\":%d%s}\n\n", typ, typ, seq, rest)
}

// respStream is a whole stream: created, in_progress, the middle events,
// then the terminal event whose response carries status, incomplete
// details and usage.
func respStream(middle []string, terminal, status, details, usage string) []string {
	evs := []string{
		respEv(0, "response.created", `,"response":{"id":"resp_abc","object":"response","status":"in_progress","output":[],"usage":null}`),
		respEv(1, "response.in_progress", `,"response":{"id":"resp_abc","object":"response","status":"in_progress","output":[],"usage":null}`),
	}
	evs = append(evs, middle...)
	return append(evs, respEv(99, terminal, `,"response":{"id":"resp_abc","object":"response","status":"`+status+
		`","incomplete_details":`+details+`,"output":[],"usage":`+usage+`}`))
}

func textDelta(seq int, text string) string {
	return respEv(seq, "response.output_text.delta", `,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"`+text+`","logprobs":[]`)
}

func reasoningDelta(seq int, text string) string {
	return respEv(seq, "response.reasoning_text.delta", `,"item_id":"rs_1","output_index":0,"content_index":0,"delta":"`+text+`"`)
}

const respUsage = `{"input_tokens":11,"input_tokens_details":{"cached_tokens":3},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":16}`

func responsesClient(t *testing.T, url string, edit func(*Config)) *Client {
	return newTestClient(t, url, func(c *Config) {
		c.Endpoint = EndpointResponses
		if edit != nil {
			edit(c)
		}
	})
}

// TestResponsesRequestBody: the request is the Responses API's: the
// messages as input, max_output_tokens, the engine extras and the
// dialect's id; no stream_options (usage always comes), an extra body's
// max_output_tokens replaced by the request's own.
func TestResponsesRequestBody(t *testing.T) {
	t.Parallel()
	h, got := recording(t, streamOf(respStream(nil, "response.completed", "completed", "null", respUsage)...))
	srv := serve(t, h)
	c := responsesClient(t, srv.URL, func(c *Config) {
		c.Dialect = "vllm"
		c.ExtraBody = map[string]any{"max_output_tokens": 3, "temperature": 0.5, "store": false}
	})
	r := request("req-1")
	r.Messages = []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hello"}}
	rec := c.Do(t.Context(), r)
	wantClass(t, rec, ErrNone)
	sent := <-got
	b := sent.body
	input, _ := b["input"].([]any)
	first, _ := input[0].(map[string]any)
	if b["model"] != "test-model" || b["stream"] != true || len(input) != 2 || first["role"] != "system" || first["content"] != "be brief" ||
		b["max_output_tokens"] != float64(16) || b["min_tokens"] != float64(16) || b["ignore_eos"] != true || b["request_id"] != "req-1" ||
		b["temperature"] != 0.5 || b["store"] != false {
		t.Errorf("body %v", b)
	}
	for _, k := range []string{"messages", "max_tokens", "stream_options", "prompt"} {
		if _, ok := b[k]; ok {
			t.Errorf("body sets %s: %v", k, b)
		}
	}
	if sent.header.Get("Accept") != "text/event-stream" || rec.ServerID != "resp_abc" {
		t.Errorf("Accept %q, server id %q", sent.header.Get("Accept"), rec.ServerID)
	}
	if _, err := New(Config{BaseURL: "http://h/v1", Model: "m", Endpoint: EndpointResponses, ExtraBody: map[string]any{"input": "x"}}); err == nil {
		t.Error("an extra body setting input was taken")
	}
}

// TestResponsesStreams: what a Record keeps of each stream shape.
func TestResponsesStreams(t *testing.T) {
	t.Parallel()
	toolAdded := respEv(2, "response.output_item.added", `,"output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"get_weather","arguments":"","status":"in_progress"}`)
	args := func(seq int, d string) string {
		return respEv(seq, "response.function_call_arguments.delta", `,"item_id":"fc_1","output_index":0,"delta":`+d)
	}
	tests := []struct {
		name      string
		events    []string
		chunks    int
		ttfc      int // the chunk whose time is FirstContent, -1 for none
		finish    string
		output    int
		reasoning int
	}{
		{
			name: "reasoning then text, completed",
			events: respStream([]string{reasoningDelta(2, "hm"), reasoningDelta(3, " so"), textDelta(4, "a"), textDelta(5, ""), textDelta(6, " b"),
				respEv(7, "response.output_text.done", `,"item_id":"msg_1","output_index":1,"content_index":0,"text":"a b"`)},
				"response.completed", "completed", "null", respUsage),
			chunks: 4, ttfc: 2, finish: "stop", output: 5, reasoning: 2,
		},
		{
			name:   "cut by max_output_tokens",
			events: respStream([]string{textDelta(2, "a"), textDelta(3, " b")}, "response.incomplete", "incomplete", `{"reason":"max_output_tokens"}`, respUsage),
			chunks: 2, ttfc: 0, finish: "length", output: 5, reasoning: 2,
		},
		{
			name:   "a content filter",
			events: respStream([]string{textDelta(2, "a")}, "response.incomplete", "incomplete", `{"reason":"content_filter"}`, `null`),
			chunks: 1, ttfc: 0, finish: "content_filter", output: 1,
		},
		{
			name:   "a function call",
			events: respStream([]string{toolAdded, args(3, `"{\"city\":"`), args(4, `"\"Paris\"}"`)}, "response.completed", "completed", "null", respUsage),
			chunks: 2, ttfc: -1, finish: "tool_calls", output: 5, reasoning: 2,
		},
		{
			name: "summaries, refusals; types from the event line when the data has none",
			events: respStream([]string{
				respEv(2, "response.reasoning_summary_text.delta", `,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"plan"`),
				"event: response.output_text.delta\ndata: {\"delta\":\"x\"}\n\n",
				": keep-alive\n\n",
				respEv(4, "response.refusal.delta", `,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"no"`),
			}, "response.completed", "completed", "null", respUsage),
			chunks: 3, ttfc: 1, finish: "stop", output: 5, reasoning: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, streamOf(tt.events...))
			rec := responsesClient(t, srv.URL, nil).Do(t.Context(), request("r"))
			wantClass(t, rec, ErrNone)
			checkTimeline(t, rec)
			if len(rec.Chunks) != tt.chunks || rec.FinishReason != tt.finish || rec.OutputTokens != tt.output || rec.ReasoningTokens != tt.reasoning ||
				rec.NoDone || rec.ServerID != "resp_abc" {
				t.Fatalf("record %+v", rec)
			}
			if rec.FirstToken != rec.Chunks[0].At {
				t.Errorf("first token %v, first chunk %v", rec.FirstToken, rec.Chunks[0].At)
			}
			switch {
			case tt.ttfc < 0 && rec.FirstContent != 0:
				t.Errorf("FirstContent %v, want none", rec.FirstContent)
			case tt.ttfc >= 0 && rec.FirstContent != rec.Chunks[tt.ttfc].At:
				t.Errorf("FirstContent %v, want chunk %d's %v", rec.FirstContent, tt.ttfc, rec.Chunks[tt.ttfc].At)
			}
			if tt.output == 5 && (rec.TokenSource != TokensFromUsage || rec.PromptTokens != 11 || rec.CachedTokens != 3) {
				t.Errorf("tokens %+v", rec)
			}
		})
	}
}

// TestResponsesFailures: the ways a Responses stream or answer fails.
func TestResponsesFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		events []string
		class  ErrorClass
		says   string
		chunks int
	}{
		{"response.failed", []string{textDelta(2, "a"), respEv(3, "response.failed",
			`,"response":{"id":"resp_abc","status":"failed","error":{"code":"server_error","message":"the model crashed"},"output":[],"usage":null}`)},
			ErrStreamBroken, "the model crashed", 1},
		{"an error event", []string{textDelta(2, "a"), respEv(3, "error", `,"code":"rate_limit","message":"slow down","param":null`)},
			ErrStreamBroken, "slow down", 1},
		{"an event named error whatever its data", []string{textDelta(2, "a"), "event: error\ndata: gateway gave up\n\n"},
			ErrStreamBroken, "gateway gave up", 1},
		{"an error object", []string{textDelta(2, "a"), "data: {\"error\":{\"message\":\"oom\"}}\n\n"}, ErrStreamBroken, "oom", 1},
		{"the body ends before the terminal event", []string{textDelta(2, "a"), textDelta(3, "b")}, ErrStreamBroken, "2 output chunks", 2},
		{"[DONE] before the terminal event", []string{textDelta(2, "a"), "data: [DONE]\n\n"}, ErrStreamBroken, "before response.completed", 1},
		{"a malformed event", []string{textDelta(2, "a"), "data: {\"type\":\"response.output_text.delta\",\"delta\":\n\n"}, ErrMalformedChunk, "event 1", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, streamOf(tt.events...))
			rec := responsesClient(t, srv.URL, nil).Do(t.Context(), request("r"))
			wantClass(t, rec, tt.class)
			checkTimeline(t, rec)
			if !strings.Contains(rec.Error, tt.says) || len(rec.Chunks) != tt.chunks {
				t.Errorf("error %q (want it to say %q), %d chunks", rec.Error, tt.says, len(rec.Chunks))
			}
		})
	}
}

// TestResponsesWhole: stream false reads the response object: its
// usage, status and output; no timeline.
func TestResponsesWhole(t *testing.T) {
	t.Parallel()
	whole := func(status, details, output string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"id":"resp_w","object":"response","created_at":1,"status":%q,"incomplete_details":%s,"model":"m","output":%s,"usage":%s}`,
				status, details, output, respUsage)
		}
	}
	msg := `[{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"hm"}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a b c","annotations":[]}]}]`
	call := `[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]`
	for _, tt := range []struct {
		name, status, details, output, finish string
		class                                 ErrorClass
	}{
		{"completed", "completed", "null", msg, "stop", ErrNone},
		{"incomplete", "incomplete", `{"reason":"max_output_tokens"}`, msg, "length", ErrNone},
		{"a function call", "completed", "null", call, "tool_calls", ErrNone},
		{"still in progress", "in_progress", "null", "[]", "", ErrStreamBroken},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, whole(tt.status, tt.details, tt.output))
			rec := responsesClient(t, srv.URL, func(c *Config) { c.NoStream = true }).Do(t.Context(), request("r"))
			wantClass(t, rec, tt.class)
			if rec.FinishReason != tt.finish || rec.Chunks != nil || rec.FirstToken != 0 || rec.ServerID != "resp_w" {
				t.Errorf("record %+v", rec)
			}
			if tt.class == ErrNone && (rec.OutputTokens != 5 || rec.PromptTokens != 11 || rec.TokenSource != TokensFromUsage) {
				t.Errorf("tokens %+v", rec)
			}
		})
	}
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"object":"error","message":"no such model","code":404}`)
	}))
	rec := responsesClient(t, srv.URL, func(c *Config) { c.NoStream = true }).Do(t.Context(), request("r"))
	wantClass(t, rec, ErrStreamBroken)
	if !strings.Contains(rec.Error, "no such model") {
		t.Errorf("error %q", rec.Error)
	}
}

// TestResponsesPerChunkAllocatesNothing: a Responses stream's events, like
// chat's chunks, cost no allocation each (decision 0204).
func TestResponsesPerChunkAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts under -race do not describe the product (perchunk_test.go)")
	}
	body := func(n int) []byte {
		var b strings.Builder
		for i := range n {
			b.WriteString(textDelta(i+2, fmt.Sprintf("tok%d ", i)))
		}
		evs := respStream([]string{b.String()}, "response.incomplete", "incomplete", `{"reason":"max_output_tokens"}`,
			fmt.Sprintf(`{"input_tokens":11,"output_tokens":%d}`, n))
		return []byte(strings.Join(evs, ""))
	}
	allocs := func(body []byte) float64 {
		c := newTestClient(t, "http://engine.test", func(cfg *Config) {
			cfg.Endpoint = EndpointResponses
			cfg.HTTPClient = &http.Client{Transport: bodyTransport(body)}
		})
		r := request("alloc")
		r.MaxTokens = 1024
		var rec Record
		n := testing.AllocsPerRun(20, func() { rec = c.Do(t.Context(), r) })
		if !rec.OK() || rec.FinishReason != "length" {
			t.Fatalf("%s: %s (finish %q)", rec.ErrorClass, rec.Error, rec.FinishReason)
		}
		return n
	}
	short, long := allocs(body(16)), allocs(body(1024))
	if long > short {
		t.Errorf("a stream of 1024 events allocates %.0f times, one of 16 %.0f: %.3f allocations per event, want 0",
			long, short, (long-short)/(1024-16))
	}
}
