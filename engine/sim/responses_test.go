package sim

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// respEvent is one event of a Responses stream as it came: its event:
// line and its data, decoded.
type respEvent struct {
	name string
	data map[string]any
}

// readRespEvents reads a Responses stream: every event has an event: line
// whose name is its data's type, and one data line; the sequence numbers
// count from 0 without a gap. Comments are counted.
func readRespEvents(t *testing.T, r io.Reader) (evs []respEvent, comments int) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur respEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data == nil {
				continue
			}
			evs = append(evs, cur)
			cur = respEvent{}
		case strings.HasPrefix(line, ":"):
			comments++
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data := strings.TrimPrefix(line, "data: ")
			if data == "[DONE]" {
				t.Fatal("a Responses stream sent [DONE]")
			}
			cur.data = decodeJSON(t, data)
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if ev.name != str(ev.data["type"]) || num(ev.data["sequence_number"]) != float64(i) {
			t.Errorf("event %d: event %q, data type %v, sequence_number %v", i, ev.name, ev.data["type"], ev.data["sequence_number"])
		}
	}
	return evs, comments
}

// deltas joins the deltas of the events of type typ, and counts them.
func deltas(evs []respEvent, typ string) (string, int) {
	var b strings.Builder
	n := 0
	for _, ev := range evs {
		if ev.name == typ {
			b.WriteString(str(ev.data["delta"]))
			n++
		}
	}
	return b.String(), n
}

// names lists the events' types, runs of one type as one.
func names(evs []respEvent) []string {
	var out []string
	for _, ev := range evs {
		if len(out) == 0 || out[len(out)-1] != ev.name {
			out = append(out, ev.name)
		}
	}
	return out
}

func responsesInput(text string) []map[string]any {
	return []map[string]any{{"role": "system", "content": "be brief"}, {"role": "user", "content": text}}
}

// TestResponsesStream: a streamed answer with reasoning, cut by
// max_output_tokens, is the Responses API's event sequence, its words and
// usage the truth's; the truth names the endpoint, its first reasoning and
// content flushes, no [DONE].
func TestResponsesStream(t *testing.T) {
	t.Parallel()
	p := tinyWith(t, func(p *Params) { p.ReasoningTokens, p.ChatTemplateTokens, p.SSEPing = 3, 5, true })
	e, ep := startEngine(t, Config{Dialect: DialectVLLM, Params: p})
	resp := rawPost(t, newClient(), ep.BaseURL+"/responses", map[string]any{
		"model": "m", "input": responsesInput("one two three"), "stream": true, "max_output_tokens": 7, "ignore_eos": true,
		"request_id": "r-1",
	})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	evs, comments := readRespEvents(t, resp.Body)
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.reasoning_text.delta", "response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.incomplete"}
	if got := names(evs); !slices.Equal(got, want) {
		t.Fatalf("events %v\nwant %v", got, want)
	}
	reasoning, nr := deltas(evs, "response.reasoning_text.delta")
	text, nt := deltas(evs, "response.output_text.delta")
	if wordCount(reasoning) != 3 || wordCount(text) != 4 || nr != 3 || nt != 4 {
		t.Errorf("reasoning %q in %d deltas, text %q in %d", reasoning, nr, text, nt)
	}
	last := evs[len(evs)-1].data["response"].(map[string]any)
	u := last["usage"].(map[string]any)
	tr := e.Truth()[0]
	if last["id"] != "resp_r-1" || last["status"] != "incomplete" || last["incomplete_details"].(map[string]any)["reason"] != "max_output_tokens" ||
		num(u["input_tokens"]) != float64(tr.PromptTokens) || num(u["output_tokens"]) != 7 || num(u["total_tokens"]) != float64(tr.PromptTokens+7) ||
		num(u["output_tokens_details"].(map[string]any)["reasoning_tokens"]) != 3 || len(last["output"].([]any)) != 2 {
		t.Errorf("response.incomplete's response %v", last)
	}
	done := evs[len(evs)-4].data
	if done["type"] != "response.output_text.done" || done["text"] != text {
		t.Errorf("output_text.done %v, want the deltas' text %q", done, text)
	}
	if tr.Endpoint != EndpointResponses || tr.ChunkID != "resp_r-1" || tr.Done || tr.Outcome != OutcomeOK || tr.FinishReason != "length" ||
		tr.OutputTokens != 7 || tr.ReasoningTokens != 3 || tr.TemplateTokens < 5 || tr.FirstReasoningFlushed == 0 ||
		tr.FirstContentFlushed <= tr.FirstReasoningFlushed || tr.FirstTokenFlushed != tr.FirstReasoningFlushed || tr.Comments != comments {
		t.Errorf("truth %+v (%d comments read)", tr, comments)
	}
}

// TestResponsesToolCall: a tool offered in the Responses shape is called
// as a function_call item whose argument deltas make its arguments; the
// answer completes (tool_calls in the truth).
func TestResponsesToolCall(t *testing.T) {
	t.Parallel()
	p := tinyWith(t, func(p *Params) { p.ToolCallRate, p.EOSMeanTokens = 1, 8 })
	natural := NaturalLengthOf(p, "tool-1")
	if natural == 0 {
		t.Fatal("no natural end drawn")
	}
	e, ep := startEngine(t, Config{Dialect: DialectSGLang, Params: p})
	resp := rawPost(t, newClient(), ep.BaseURL+"/responses", map[string]any{
		"model": "m", "input": "what is the weather", "stream": true, "max_output_tokens": natural + 10, "rid": "tool-1",
		"tools": []map[string]any{{"type": "function", "name": "get_weather", "parameters": map[string]any{"type": "object"}}},
	})
	evs, _ := readRespEvents(t, resp.Body)
	args, n := deltas(evs, "response.function_call_arguments.delta")
	var parsed struct{ Input string }
	if err := json.Unmarshal([]byte(args), &parsed); err != nil || n == 0 {
		t.Fatalf("arguments %q in %d deltas: %v", args, n, err)
	}
	added := evs[2].data["item"].(map[string]any)
	tr := e.Truth()[0]
	if added["type"] != "function_call" || added["name"] != "get_weather" || !strings.HasPrefix(str(added["call_id"]), "call_") {
		t.Errorf("output_item.added %v", added)
	}
	last := evs[len(evs)-1].data
	out := last["response"].(map[string]any)["output"].([]any)[0].(map[string]any)
	if last["type"] != "response.completed" || out["arguments"] != args || out["status"] != "completed" {
		t.Errorf("terminal %v", last)
	}
	if tr.ToolCall != "get_weather" || tr.FinishReason != "tool_calls" || tr.FirstToolCallFlushed == 0 || tr.FirstContentFlushed != 0 ||
		wordCount(parsed.Input) != tr.OutputTokens || tr.OutputTokens != natural || tr.ChunkID != "tool-1" {
		t.Errorf("truth %+v, arguments %q", tr, args)
	}
}

// TestResponsesWhole: stream false answers the response object, its
// output and usage the truth's; the input's template applies as chat's.
func TestResponsesWhole(t *testing.T) {
	t.Parallel()
	p := tinyWith(t, func(p *Params) { p.ChatTemplateTokens, p.ChatTemplateMessageTokens = 4, 2 })
	e, ep := startEngine(t, Config{Dialect: DialectVLLM, Params: p})
	whole := decodeJSON(t, readAll(t, rawPost(t, newClient(), ep.BaseURL+"/responses", map[string]any{
		"model": "m", "input": []map[string]any{{"role": "user", "content": []map[string]any{{"type": "input_text", "text": "a b c"}}}},
		"instructions": "be brief", "max_output_tokens": 4, "ignore_eos": true,
	})))
	chat := decodeJSON(t, readAll(t, rawPost(t, newClient(), ep.BaseURL+"/chat/completions", map[string]any{
		"messages": []map[string]any{{"role": "system", "content": "be brief"}, {"role": "user", "content": "a b c"}}, "max_tokens": 1,
	})))
	u := whole["usage"].(map[string]any)
	item := whole["output"].([]any)[0].(map[string]any)
	text := str(item["content"].([]any)[0].(map[string]any)["text"])
	if whole["object"] != "response" || whole["status"] != "incomplete" || item["type"] != "message" || wordCount(text) != 4 ||
		num(u["output_tokens"]) != 4 || num(u["input_tokens"]) != num(chat["usage"].(map[string]any)["prompt_tokens"]) {
		t.Errorf("response %v, chat's usage %v", whole, chat["usage"])
	}
	tr := truthByID(t, e, func(tr RequestTruth) bool { return tr.Endpoint == EndpointResponses })
	if tr.Stream || tr.OutputTokens != 4 || tr.FirstContentFlushed != tr.Finish || !strings.HasPrefix(tr.ChunkID, "resp_") ||
		whole["id"] != tr.ChunkID || tr.Outcome != OutcomeOK {
		t.Errorf("truth %+v, id %v", tr, whole["id"])
	}
}

// TestResponsesErrors: a bad body is OpenAI's error body; a stream that
// fails mid-way ends with an error event (no terminal event).
func TestResponsesErrors(t *testing.T) {
	t.Parallel()
	f := Faults{StreamErrorRate: 1, AfterTokens: 2}
	_, ep := startEngine(t, Config{Dialect: DialectVLLM, Faults: f})
	for _, body := range []map[string]any{
		{"model": "m", "input": []any{}},
		{"model": "m", "input": "a", "max_output_tokens": 0},
		{"model": "m", "input": []map[string]any{{"type": "image_generation_call"}}},
	} {
		resp := rawPost(t, newClient(), ep.BaseURL+"/responses", body)
		got := decodeJSON(t, readAll(t, resp))
		if resp.StatusCode != http.StatusBadRequest || str(got["error"].(map[string]any)["message"]) == "" {
			t.Errorf("%v: status %d, %v", body, resp.StatusCode, got)
		}
	}
	resp := rawPost(t, newClient(), ep.BaseURL+"/responses", map[string]any{"model": "m", "input": "a b", "stream": true, "max_output_tokens": 8})
	evs, _ := readRespEvents(t, resp.Body)
	last := evs[len(evs)-1].data
	if last["type"] != "error" || last["code"] != "server_error" || str(last["message"]) == "" {
		t.Errorf("last event %v", last)
	}
}

// BenchmarkResponsesEventEncode is BenchmarkChunkEncode for the Responses
// API's output_text.delta events: the per-token rendering cost.
func BenchmarkResponsesEventEncode(b *testing.B) {
	enc := newEncoder("0123456789abcdef0123456789abcdef", "llmbench-sim", 1700000000, false, false, true)
	a := answer{base: 42}
	a.events = newRespEvents("resp_0123456789abcdef0123456789abcdef", "llmbench-sim", &a)
	buf := make([]byte, 0, 4096)
	buf = enc.tokens(buf[:0], &a, 0, 0, 1, false, nil) // the response's first events
	b.ReportAllocs()
	for i := 1; b.Loop(); i++ {
		buf = enc.tokens(buf[:0], &a, 0, i, i+1, false, nil)
	}
}
