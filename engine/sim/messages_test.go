package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/internal/race"
)

// sseEvents reads a text/event-stream body as (event, data) pairs.
func sseEvents(t *testing.T, body io.Reader) (names []string, datas []map[string]any) {
	t.Helper()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatalf("event %q: data %q: %v", name, line, err)
			}
			if d["type"] != name {
				t.Errorf("event %q carries type %v", name, d["type"])
			}
			names, datas = append(names, name), append(datas, d)
			name = ""
		case line == "" || strings.HasPrefix(line, ":"):
		default:
			t.Errorf("unexpected line %q", line)
		}
	}
	return names, datas
}

func postMessages(t *testing.T, url string, fields map[string]any) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/messages", "application/json", bytes.NewReader(chatBody(fields)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// TestMessagesStream: a streamed Messages answer is the API's event
// sequence: message_start with the input counts, a thinking block (deltas,
// then its signature), the tool_use block whose input_json_deltas join into
// the call's JSON input, message_delta with stop_reason tool_use and the
// output count, message_stop; its counts are the truth's.
func TestMessagesStream(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{Dialect: DialectVLLM, Params: tinyWith(t, func(p *Params) {
		p.ReasoningTokens, p.ToolCallRate, p.StreamInterval, p.ChatTemplateTokens = 2, 1, 2, 5
	})})
	resp := postMessages(t, ep.BaseURL, map[string]any{
		"model": ep.Model, "max_tokens": 7, "stream": true, "ignore_eos": true, "system": "be brief",
		"messages":   []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": "one two three"}}}},
		"tools":      []map[string]any{{"name": "get_weather", "input_schema": map[string]any{"type": "object"}}},
		"request_id": "m-1",
	})
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %s", resp.Status, b)
	}
	names, datas := sseEvents(t, resp.Body)
	// The dialect's metrics count it as any request.
	fams := scrape(t, ep.MetricsURL)
	if ok, gen := value(t, fams, "vllm:request_success_total"), value(t, fams, "vllm:generation_tokens_total"); ok != 1 || gen != 7 {
		t.Errorf("vllm metrics: %v successes, %v generation tokens; want 1, 7", ok, gen)
	}
	// Tokens 0 (sent at once), 1-2 (thinking, then the call), 3-4, 5-6:
	// two thinking deltas and the signature, then three input deltas.
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if !slices.Equal(names, want) {
		t.Fatalf("events %v\nwant   %v", names, want)
	}
	tr := e.Truth()[0]
	msg := datas[0]["message"].(map[string]any)
	usage := msg["usage"].(map[string]any)
	if msg["id"] != tr.ChunkID || usage["input_tokens"] != float64(tr.PromptTokens-tr.CachedTokens) ||
		usage["cache_read_input_tokens"] != float64(tr.CachedTokens) || tr.PromptTokens != chatPromptTokens(t, ep.BaseURL, "be brief", "one two three") {
		t.Errorf("message_start %v; truth id %s, prompt %d, cached %d", msg, tr.ChunkID, tr.PromptTokens, tr.CachedTokens)
	}
	if b := datas[1]["content_block"].(map[string]any); b["type"] != "thinking" || datas[1]["index"] != 0.0 {
		t.Errorf("first block %v", datas[1])
	}
	if d := datas[4]["delta"].(map[string]any); d["type"] != "signature_delta" || d["signature"] == "" {
		t.Errorf("thinking block ends with %v", d)
	}
	if b := datas[6]["content_block"].(map[string]any); b["type"] != "tool_use" || b["name"] != "get_weather" || datas[6]["index"] != 1.0 {
		t.Errorf("second block %v", datas[6])
	}
	var input strings.Builder
	for _, d := range datas[7:10] {
		delta := d["delta"].(map[string]any)
		if delta["type"] != "input_json_delta" {
			t.Errorf("tool delta %v", delta)
		}
		input.WriteString(delta["partial_json"].(string))
	}
	var args struct{ Input string }
	if err := json.Unmarshal([]byte(input.String()), &args); err != nil || len(strings.Fields(args.Input)) != 5 {
		t.Errorf("tool input %q: %v", input.String(), err)
	}
	md := datas[11]
	if md["delta"].(map[string]any)["stop_reason"] != "tool_use" || md["usage"].(map[string]any)["output_tokens"] != 7.0 {
		t.Errorf("message_delta %v", md)
	}
	if tr.Endpoint != EndpointMessages || tr.OutputTokens != 7 || tr.FinishReason != "tool_calls" || tr.ToolCall != "get_weather" || !tr.Done || tr.Outcome != OutcomeOK {
		t.Errorf("truth %+v", tr)
	}
}

// chatPromptTokens is the prompt tokens the engine counts for a chat
// request of a system and a user message: what the Messages request with
// them as system and message must count too.
func chatPromptTokens(t *testing.T, url, system, user string) int {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json", bytes.NewReader(chatBody(map[string]any{
		"max_tokens": 1, "messages": []map[string]any{{"role": "system", "content": system}, {"role": "user", "content": user}},
	})))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Usage.PromptTokens == 0 {
		t.Fatalf("chat: %v", err)
	}
	return out.Usage.PromptTokens
}

// TestMessagesWhole: a non-streamed answer is a message object with its
// content blocks, stop_reason and usage; text when no tool is offered.
func TestMessagesWhole(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{Params: tinyWith(t, func(p *Params) { p.ReasoningTokens = 2 })})
	resp := postMessages(t, ep.BaseURL, map[string]any{
		"model": ep.Model, "max_tokens": 6, "ignore_eos": true,
		"messages": []map[string]any{{"role": "user", "content": "hello there"}},
	})
	var m struct {
		StopReason string `json:"stop_reason"`
		Content    []struct{ Type, Text, Thinking, Signature string }
		Usage      map[string]int
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &m); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %v", resp.Status, raw, err)
	}
	tr := e.Truth()[0]
	if m.StopReason != "max_tokens" || len(m.Content) != 2 || m.Content[0].Type != "thinking" || len(strings.Fields(m.Content[0].Thinking)) != 2 ||
		m.Content[0].Signature == "" || m.Content[1].Type != "text" || len(strings.Fields(m.Content[1].Text)) != 4 {
		t.Errorf("message %s", raw)
	}
	if m.Usage["input_tokens"]+m.Usage["cache_read_input_tokens"] != tr.PromptTokens || m.Usage["output_tokens"] != 6 || tr.OutputTokens != 6 {
		t.Errorf("usage %v, truth prompt %d output %d", m.Usage, tr.PromptTokens, tr.OutputTokens)
	}
}

// TestMessagesErrors: a request the API would refuse is refused in its
// error shape, and recorded.
func TestMessagesErrors(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{})
	for _, tc := range []struct {
		name   string
		fields map[string]any
		want   string
	}{
		{"no max_tokens", map[string]any{"messages": []map[string]any{{"role": "user", "content": "x"}}}, "max_tokens"},
		{"system role", map[string]any{"max_tokens": 1, "messages": []map[string]any{{"role": "system", "content": "x"}}}, "role"},
		{"image block", map[string]any{"max_tokens": 1, "messages": []map[string]any{{"role": "user", "content": []map[string]any{{"type": "image"}}}}}, "image"},
		{"no messages", map[string]any{"max_tokens": 1, "messages": []any{}}, "messages"},
	} {
		resp := postMessages(t, ep.BaseURL, tc.fields)
		var body struct {
			Type  string
			Error struct{ Type, Message string }
		}
		raw, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(raw, &body); err != nil || resp.StatusCode != http.StatusBadRequest || body.Type != "error" ||
			body.Error.Type != "invalid_request_error" || !strings.Contains(body.Error.Message, tc.want) {
			t.Errorf("%s: %s %s", tc.name, resp.Status, raw)
		}
	}
	for _, tr := range e.Truth() {
		if tr.Outcome != OutcomeRejected || tr.Endpoint != EndpointMessages {
			t.Errorf("truth %+v", tr)
		}
	}
}

// TestMessagesStreamError: an error mid-stream is the API's error event.
func TestMessagesStreamError(t *testing.T) {
	t.Parallel()
	_, ep := startEngine(t, Config{Faults: Faults{StreamErrorRate: 1, AfterTokens: 2}})
	resp := postMessages(t, ep.BaseURL, map[string]any{"max_tokens": 6, "stream": true, "ignore_eos": true,
		"messages": []map[string]any{{"role": "user", "content": "a b c"}}})
	names, datas := sseEvents(t, resp.Body)
	last := len(names) - 1
	if last < 0 || names[last] != "error" || slices.Contains(names, "message_stop") {
		t.Fatalf("events %v", names)
	}
	if e := datas[last]["error"].(map[string]any); e["type"] != "api_error" || !strings.Contains(e["message"].(string), "injected fault") {
		t.Errorf("error event %v", datas[last])
	}
}

// TestMessagesEncodeAllocatesNothing: rendering a token's event allocates
// nothing (the engine's per-token path, as BenchmarkChunkEncode's).
func TestMessagesEncodeAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts under -race do not describe the product")
	}
	for _, a := range []answer{{base: 42, reasoning: 8}, {base: 7, tool: "f", toolID: "call_1"}} {
		m := &messagesEncoder{id: []byte(`"msg"`), model: []byte(`"m"`), ans: &a, open: -1}
		buf := m.tokens(make([]byte, 0, 1024), 0, 1, false)
		i := 1
		if n := testing.AllocsPerRun(200, func() {
			buf = m.tokens(buf[:0], i, i+1, false)
			i++
		}); n != 0 {
			t.Errorf("%+v: %.1f allocations per token event", a, n)
		}
	}
}

// BenchmarkMessagesEncode is BenchmarkChunkEncode for the Messages API's
// text_delta events.
func BenchmarkMessagesEncode(b *testing.B) {
	a := answer{base: 42}
	m := &messagesEncoder{id: []byte(`"msg_0123456789abcdef"`), model: []byte(`"llmbench-sim"`), ans: &a, open: -1}
	buf := m.tokens(make([]byte, 0, 512), 0, 1, false)
	for i := 1; b.Loop(); i++ {
		buf = m.tokens(buf[:0], i, i+1, false)
	}
}
