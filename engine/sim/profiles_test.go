package sim

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

func tinyWith(t *testing.T, set func(*Params)) Params {
	t.Helper()
	p, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	set(&p)
	return p
}

// TestChatTemplateCalibration: usage.prompt_tokens = the words + the
// template's tokens, in every dialect's counters, and the tokenizer
// endpoints say the same, so a client can measure the overhead.
func TestChatTemplateCalibration(t *testing.T) {
	t.Parallel()
	msgs := []map[string]any{{"role": "system", "content": words("s", 5)}, {"role": "user", "content": words("u", 7)}}
	const wordsN, template = 12, 3 + 2*4
	for _, dialect := range Dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			p := tinyWith(t, func(p *Params) { p.ChatTemplateTokens, p.ChatTemplateMessageTokens = 3, 4 })
			e, ep := startEngine(t, Config{Dialect: dialect, Params: p})
			base := strings.TrimSuffix(ep.BaseURL, "/v1")
			client := newClient()
			res := postStream(t, client, ep.BaseURL+"/chat/completions", clockSince(), nil, chatBody(map[string]any{
				"messages": msgs, "stream": true, "stream_options": map[string]any{"include_usage": true}, "max_tokens": 2,
			}))
			u := res.chunks[len(res.chunks)-1].Usage
			if u == nil || u.PromptTokens != wordsN+template {
				t.Fatalf("usage %+v, want %d prompt tokens", u, wordsN+template)
			}
			tr := e.Truth()[0]
			if tr.PromptTokens != wordsN+template || tr.TemplateTokens != template {
				t.Errorf("truth prompt %d template %d", tr.PromptTokens, tr.TemplateTokens)
			}
			fams := scrape(t, ep.MetricsURL)
			counter := map[string]string{
				DialectSGLang: "sglang:prompt_tokens_total", DialectVLLM: "vllm:prompt_tokens_total",
				DialectFastDeploy: "fastdeploy:prompt_tokens_total", DialectLlamaCpp: "llamacpp:prompt_tokens_total",
			}[dialect]
			if got := value(t, fams, counter); got != wordsN+template {
				t.Errorf("%s = %v, want %d", counter, got, wordsN+template)
			}
			// A completion's prompt has no template.
			c := decodeJSON(t, readAll(t, rawPost(t, client, ep.BaseURL+"/completions", map[string]any{"prompt": words("c", 6), "max_tokens": 1})))
			if got := num(c["usage"].(map[string]any)["prompt_tokens"]); got != 6 {
				t.Errorf("completion prompt_tokens %v, want 6", got)
			}

			switch dialect {
			case DialectLlamaCpp:
				tmpl := decodeJSON(t, readAll(t, rawPost(t, client, base+"/apply-template", map[string]any{"messages": msgs})))
				text := str(tmpl["prompt"])
				tok := decodeJSON(t, readAll(t, rawPost(t, client, base+"/tokenize", map[string]any{"content": text})))
				if n := len(tok["tokens"].([]any)); n != wordsN+template {
					t.Errorf("/tokenize of /apply-template's %q: %d tokens, want %d", text, n, wordsN+template)
				}
				tok = decodeJSON(t, readAll(t, rawPost(t, client, base+"/tokenize", map[string]any{"content": words("x", 9)})))
				if n := len(tok["tokens"].([]any)); n != 9 {
					t.Errorf("/tokenize of 9 words: %d tokens", n)
				}
			case DialectVLLM, DialectSGLang:
				paths := []string{"/tokenize"}
				if dialect == DialectSGLang {
					paths = append(paths, "/v1/tokenize")
				}
				for _, path := range paths {
					tok := decodeJSON(t, readAll(t, rawPost(t, client, base+path, map[string]any{"model": DefaultModel, "messages": msgs})))
					if num(tok["count"]) != wordsN+template || len(tok["tokens"].([]any)) != wordsN+template || num(tok["max_model_len"]) != 4096 {
						t.Errorf("%s messages: %v", path, tok)
					}
					tok = decodeJSON(t, readAll(t, rawPost(t, client, base+path, map[string]any{"model": DefaultModel, "prompt": words("x", 9)})))
					if num(tok["count"]) != 9 {
						t.Errorf("%s prompt: %v", path, tok)
					}
				}
			case DialectFastDeploy:
				if resp := rawPost(t, client, base+"/tokenize", map[string]any{"prompt": "a"}); resp.StatusCode != http.StatusNotFound {
					t.Errorf("fastdeploy /tokenize: %s, want 404", resp.Status)
				}
			}
		})
	}
}

// TestTemplateOffKeepsCounts: without template knobs, the tokenizer
// endpoints count the words alone, as usage always did.
func TestTemplateOffKeepsCounts(t *testing.T) {
	t.Parallel()
	_, ep := startEngine(t, Config{Dialect: DialectVLLM})
	tok := decodeJSON(t, readAll(t, rawPost(t, newClient(), strings.TrimSuffix(ep.BaseURL, "/v1")+"/tokenize",
		map[string]any{"messages": []map[string]any{{"role": "user", "content": "a b c"}}})))
	if num(tok["count"]) != 3 {
		t.Errorf("count %v, want 3", tok["count"])
	}
}

// TestReasoningThenContent: the first reasoning_tokens tokens stream as
// reasoning_content, the rest as content, and the truth says when each
// kind first went out.
func TestReasoningThenContent(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{Dialect: DialectVLLM, Params: tinyWith(t, func(p *Params) { p.ReasoningTokens = 3 })})
	evs := dataEvents(t, readEvents(t, rawPost(t, newClient(), ep.BaseURL+"/chat/completions", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "think"}}, "max_tokens": 8, "stream": true,
		"stream_options": map[string]any{"include_usage": true},
	}).Body))
	var reasoning, content strings.Builder
	firstContent := -1
	for i, ev := range evs {
		d := deltaOf(ev)
		reasoning.WriteString(str(d["reasoning_content"]))
		content.WriteString(str(d["content"]))
		if str(d["content"]) != "" && firstContent < 0 {
			firstContent = i
		}
	}
	if wordCount(reasoning.String()) != 3 || wordCount(content.String()) != 5 || firstContent != 4 {
		t.Errorf("reasoning %q content %q (first content in event %d)", reasoning.String(), content.String(), firstContent)
	}
	u := usageOfChunk(evs[len(evs)-1])
	if num(u["completion_tokens"]) != 8 || num(u["completion_tokens_details"].(map[string]any)["reasoning_tokens"]) != 3 {
		t.Errorf("usage %v", u)
	}
	tr := e.Truth()[0]
	if tr.ReasoningTokens != 3 || tr.FirstReasoningFlushed != tr.FirstTokenFlushed || tr.FirstContentFlushed != tr.TokenFlushes[3] ||
		tr.FirstToolCallFlushed != 0 || tr.FinishReason != "length" {
		t.Errorf("truth reasoning %d first %v reasoning %v content %v (flushes %v)", tr.ReasoningTokens,
			tr.FirstTokenFlushed, tr.FirstReasoningFlushed, tr.FirstContentFlushed, tr.TokenFlushes)
	}
}

// TestToolCallStream: with tools offered and tool_call_rate 1, the answer
// after the reasoning is a tool call streamed in pieces, OpenAI's shape.
func TestToolCallStream(t *testing.T) {
	t.Parallel()
	p := tinyWith(t, func(p *Params) { p.ReasoningTokens, p.ToolCallRate, p.StreamInterval = 2, 1, 2 })
	e, ep := startEngine(t, Config{Dialect: DialectSGLang, Params: p})
	tools := []map[string]any{{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": map[string]any{"type": "object"}}}}
	client := newClient()
	evs := dataEvents(t, readEvents(t, rawPost(t, client, ep.BaseURL+"/chat/completions", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "weather?"}}, "max_tokens": 9, "stream": true,
		"tools": tools, "rid": "tc1",
	}).Body))
	var args strings.Builder
	var name, id, finish string
	toolChunks := 0
	for _, ev := range evs {
		if c := choice0(ev); c != nil && c["finish_reason"] != nil {
			finish = str(c["finish_reason"])
		}
		calls, _ := deltaOf(ev)["tool_calls"].([]any)
		if len(calls) == 0 {
			continue
		}
		toolChunks++
		call := calls[0].(map[string]any)
		if num(call["index"]) != 0 {
			t.Errorf("tool call index %v", call["index"])
		}
		fn := call["function"].(map[string]any)
		if toolChunks == 1 {
			name, id = str(fn["name"]), str(call["id"])
			if str(call["type"]) != "function" {
				t.Errorf("first tool chunk %v", call)
			}
		} else if call["id"] != nil || fn["name"] != nil {
			t.Errorf("later tool chunk repeats id or name: %v", call)
		}
		args.WriteString(str(fn["arguments"]))
	}
	var parsed struct{ Input string }
	if err := json.Unmarshal([]byte(args.String()), &parsed); err != nil {
		t.Fatalf("arguments %q: %v", args.String(), err)
	}
	if name != "get_weather" || !strings.HasPrefix(id, "call_") || wordCount(parsed.Input) != 7 || finish != finishToolCalls {
		t.Errorf("tool call %s %s args %q finish %q", name, id, args.String(), finish)
	}
	tr := truthByID(t, e, func(tr RequestTruth) bool { return tr.ID == "tc1" })
	if tr.ToolCall != "get_weather" || tr.FinishReason != finishToolCalls || tr.ReasoningTokens != 2 ||
		tr.FirstToolCallFlushed == 0 || tr.FirstContentFlushed != 0 || tr.FirstReasoningFlushed != tr.FirstTokenFlushed ||
		tr.FirstToolCallFlushed < tr.FirstReasoningFlushed {
		t.Errorf("truth %+v", tr)
	}
	// Chunks: 1, then 2 at a time: [1 2 2 2 2]; the reasoning ends inside the second.
	if !slices.Equal(tr.ChunkTokens, []int{1, 2, 2, 2, 2}) {
		t.Errorf("chunk tokens %v", tr.ChunkTokens)
	}

	// Not streamed: one message with the call; tool_choice "none" gets content.
	whole := decodeJSON(t, readAll(t, rawPost(t, client, ep.BaseURL+"/chat/completions", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "weather?"}}, "max_tokens": 5, "tools": tools,
		"tool_choice": map[string]any{"type": "function", "function": map[string]any{"name": "get_time"}},
	})))
	c := choice0(whole)
	msg := c["message"].(map[string]any)
	call := msg["tool_calls"].([]any)[0].(map[string]any)
	fn := call["function"].(map[string]any)
	if str(c["finish_reason"]) != finishToolCalls || msg["content"] != nil || str(fn["name"]) != "get_time" ||
		!json.Valid([]byte(str(fn["arguments"]))) || wordCount(str(msg["reasoning_content"])) != 2 {
		t.Errorf("non-streamed tool call %v", whole)
	}
	none := decodeJSON(t, readAll(t, rawPost(t, client, ep.BaseURL+"/chat/completions", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "weather?"}}, "max_tokens": 5, "tools": tools, "tool_choice": "none",
	})))
	if c := choice0(none); str(c["finish_reason"]) != "length" || wordCount(str(c["message"].(map[string]any)["content"])) != 3 {
		t.Errorf("tool_choice none: %v", none)
	}
}

// TestStreamIntervalAndContinuousUsage: tokens coalesce into chunks of the
// stream interval, every chunk carries usage when asked, and the truth
// says how many tokens each chunk had.
func TestStreamIntervalAndContinuousUsage(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{Dialect: DialectVLLM, Params: tinyWith(t, func(p *Params) { p.StreamInterval = 4 })})
	evs := dataEvents(t, readEvents(t, rawPost(t, newClient(), ep.BaseURL+"/chat/completions", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "a b c"}}, "max_tokens": 10, "stream": true,
		"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true}, "request_id": "si",
	}).Body))
	var perChunk []int
	total := 0
	for i, ev := range evs {
		u := usageOfChunk(ev)
		if u == nil {
			t.Fatalf("event %d without usage: %v", i, ev)
		}
		if n := wordCount(str(deltaOf(ev)["content"])); n > 0 {
			perChunk = append(perChunk, n)
			total += n
		}
		if num(u["completion_tokens"]) != float64(total) || num(u["prompt_tokens"]) != 3 {
			t.Errorf("event %d usage %v after %d tokens", i, u, total)
		}
	}
	tr := e.Truth()[0]
	if !slices.Equal(perChunk, []int{1, 4, 4, 1}) || !slices.Equal(tr.ChunkTokens, perChunk) {
		t.Errorf("client chunks %v, truth %v, want [1 4 4 1]", perChunk, tr.ChunkTokens)
	}
	// Tokens of one chunk share its flush time.
	if tr.TokenFlushes[1] != tr.TokenFlushes[4] || tr.TokenFlushes[4] == tr.TokenFlushes[5] {
		t.Errorf("token flushes %v", tr.TokenFlushes)
	}
}

// TestSpeculativeChunksInTruth: with speculative decoding each chunk
// carries one pass's accepted tokens, and the truth says how many.
func TestSpeculativeChunksInTruth(t *testing.T) {
	t.Parallel()
	p := tinyWith(t, func(p *Params) { p.SpecTokens, p.SpecAcceptRate = 3, 0.7 })
	e, ep := startEngine(t, Config{Params: p})
	res := postStream(t, newClient(), ep.BaseURL+"/chat/completions", clockSince(), nil, chatBody(map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "a b c"}}, "max_tokens": 40, "stream": true,
	}))
	var perChunk []int
	for _, c := range res.chunks {
		if n := wordCount(c.Choices[0].Delta.Content); n > 0 {
			perChunk = append(perChunk, n)
		}
	}
	tr := e.Truth()[0]
	if !slices.Equal(tr.ChunkTokens, perChunk) || slices.Max(perChunk) < 2 {
		t.Errorf("client chunks %v, truth %v", perChunk, tr.ChunkTokens)
	}
}

// TestNoDoneAndPing: streams end after finish_reason and usage without
// [DONE]; comment lines precede every event.
func TestNoDoneAndPing(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{Dialect: DialectSGLang, Params: tinyWith(t, func(p *Params) { p.NoDone, p.SSEPing = true, true })})
	raw := readEvents(t, rawPost(t, newClient(), ep.BaseURL+"/chat/completions", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "a b c"}}, "max_tokens": 3, "stream": true,
		"stream_options": map[string]any{"include_usage": true},
	}).Body)
	// ping, role, ping, 3 × (ping, token), ping, finish, ping, usage: no [DONE].
	if len(raw) != 2*(1+3+1+1) {
		t.Fatalf("%d lines: %v", len(raw), raw)
	}
	for i, ev := range raw {
		if ev.comment != (i%2 == 0) || (ev.comment && ev.data != ": ping") || ev.data == "[DONE]" {
			t.Errorf("line %d = %+v", i, ev)
		}
	}
	evs := dataEvents(t, raw)
	if c := choice0(evs[len(evs)-2]); str(c["finish_reason"]) != "length" || usageOfChunk(evs[len(evs)-1]) == nil {
		t.Errorf("end of stream %v", evs[len(evs)-2:])
	}
	tr := e.Truth()[0]
	if tr.Done || tr.Outcome != OutcomeOK || tr.Comments != 6 || len(tr.Faults) != 0 {
		t.Errorf("truth done %v outcome %s comments %d faults %v", tr.Done, tr.Outcome, tr.Comments, tr.Faults)
	}
}

// TestDoneInTruth: by default a stream ends with [DONE] and the truth says so.
func TestDoneInTruth(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{})
	res := postStream(t, newClient(), ep.BaseURL+"/chat/completions", clockSince(), nil, chatBody(map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "a"}}, "max_tokens": 2, "stream": true,
	}))
	if tr := e.Truth()[0]; !res.done || !tr.Done || tr.Comments != 0 || tr.Endpoint != EndpointChat || !slices.Equal(tr.ChunkTokens, []int{1, 1}) {
		t.Errorf("truth %+v", tr)
	}
}

// TestStreamErrorEvent (OpenAI-style dialects): the error event after
// after_tokens, no [DONE], the engine generating on.
func TestStreamErrorEvent(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{Dialect: DialectVLLM, Faults: Faults{StreamErrorRate: 1, AfterTokens: 2}})
	raw := readEvents(t, rawPost(t, newClient(), ep.BaseURL+"/chat/completions", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "a"}}, "max_tokens": 6, "stream": true,
	}).Body)
	last := decodeJSON(t, raw[len(raw)-1].data)
	errObj, _ := last["error"].(map[string]any)
	if errObj == nil || str(errObj["message"]) == "" || len(raw) != 1+2+1 {
		t.Errorf("events %v", raw)
	}
	tr := e.Truth()[0]
	if tr.OutputTokens != 2 || tr.GeneratedTokens != 6 || tr.Outcome != OutcomeBroken || tr.FinishReason != "length" {
		t.Errorf("truth %+v", tr)
	}
}

// TestCompletionsEndpoint: /v1/completions streamed and not, prompt text
// in, choices[].text out, with truth.
func TestCompletionsEndpoint(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{DialectSGLang, DialectVLLM, DialectFastDeploy} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			e, ep := startEngine(t, Config{Dialect: dialect, Params: tinyWith(t, func(p *Params) { p.ReasoningTokens = 2 })})
			client := newClient()
			evs := dataEvents(t, readEvents(t, rawPost(t, client, ep.BaseURL+"/completions", map[string]any{
				"prompt": "one two three four", "max_tokens": 5, "stream": true,
				"stream_options": map[string]any{"include_usage": true}, "rid": "c1", "request_id": "c1",
			}).Body))
			var text strings.Builder
			for _, ev := range evs {
				if ev["object"] != "text_completion" {
					t.Errorf("object %v", ev["object"])
				}
				if c := choice0(ev); c != nil {
					text.WriteString(str(c["text"]))
				}
			}
			if fr := str(choice0(evs[len(evs)-2])["finish_reason"]); fr != "length" || wordCount(text.String()) != 5 {
				t.Errorf("text %q finish %q", text.String(), fr)
			}
			u := usageOfChunk(evs[len(evs)-1])
			if num(u["prompt_tokens"]) != 4 || num(u["completion_tokens"]) != 5 {
				t.Errorf("usage %v", u)
			}
			if dialect == DialectVLLM && !strings.HasPrefix(str(evs[0]["id"]), "cmpl-") {
				t.Errorf("vLLM completion id %v", evs[0]["id"])
			}
			tr := truthByID(t, e, func(tr RequestTruth) bool { return tr.ID == "c1" })
			if tr.Endpoint != EndpointCompletions || tr.PromptTokens != 4 || tr.OutputTokens != 5 || !tr.Done ||
				tr.ReasoningTokens != 0 || tr.FirstContentFlushed != tr.FirstTokenFlushed || len(tr.ChunkTokens) != 5 {
				t.Errorf("truth %+v", tr)
			}

			whole := decodeJSON(t, readAll(t, rawPost(t, client, ep.BaseURL+"/completions", map[string]any{
				"prompt": "one two", "max_tokens": 3, "rid": "c2", "request_id": "c2",
			})))
			if c := choice0(whole); wordCount(str(c["text"])) != 3 || str(c["finish_reason"]) != "length" ||
				num(whole["usage"].(map[string]any)["total_tokens"]) != 5 {
				t.Errorf("non-streamed completion %v", whole)
			}
			tr = truthByID(t, e, func(tr RequestTruth) bool { return tr.ID == "c2" })
			if tr.Stream || tr.Endpoint != EndpointCompletions || tr.OutputTokens != 3 || tr.FirstTokenFlushed != tr.Finish {
				t.Errorf("truth %+v", tr)
			}
			if resp := rawPost(t, client, ep.BaseURL+"/completions", map[string]any{"prompt": []int{1, 2}}); resp.StatusCode != http.StatusBadRequest {
				t.Errorf("token-id prompt: %s, want 400", resp.Status)
			}
		})
	}
}

// TestNonStreamedChatTruth: one JSON response with usage, and its truth.
func TestNonStreamedChatTruth(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{Dialect: DialectFastDeploy})
	whole := decodeJSON(t, readAll(t, rawPost(t, newClient(), ep.BaseURL+"/chat/completions", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "a b"}}, "max_tokens": 4,
	})))
	u := whole["usage"].(map[string]any)
	if whole["object"] != "chat.completion" || num(u["prompt_tokens"]) != 2 || num(u["completion_tokens"]) != 4 ||
		wordCount(str(choice0(whole)["message"].(map[string]any)["content"])) != 4 {
		t.Errorf("response %v", whole)
	}
	tr := e.Truth()[0]
	if tr.Stream || tr.Done || tr.OutputTokens != 4 || tr.GeneratedTokens != 4 || tr.FirstContentFlushed != tr.Finish ||
		tr.ChunkTokens != nil || len(tr.TokenFlushes) != 4 || tr.Outcome != OutcomeOK {
		t.Errorf("truth %+v", tr)
	}
}

// TestKeepAlivePolicy: the Keep-Alive header, the connection closed after
// keep_alive_max requests and after keep_alive_timeout idle, in the truth.
func TestKeepAlivePolicy(t *testing.T) {
	t.Parallel()
	p := tinyWith(t, func(p *Params) { p.KeepAliveMax, p.KeepAliveTimeout = 3, 300*time.Millisecond })
	e, ep := startEngine(t, Config{Dialect: DialectSGLang, Params: p})
	client := &http.Client{Transport: &http.Transport{}}
	send := func(rid string) (reused bool, hdr http.Header) {
		t.Helper()
		body := chatBody(map[string]any{"messages": []map[string]any{{"role": "user", "content": "a"}}, "max_tokens": 1, "rid": rid})
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, ep.BaseURL+"/chat/completions", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
		}))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		return reused, resp.Header
	}
	var reused []bool
	for i, rid := range []string{"k1", "k2", "k3", "k4"} {
		r, hdr := send(rid)
		reused = append(reused, r)
		if got := hdr.Get("Keep-Alive"); got != "timeout=1, max=3" {
			t.Errorf("request %d Keep-Alive %q", i+1, got)
		}
	}
	time.Sleep(600 * time.Millisecond) // past the idle timeout
	r, _ := send("k5")
	reused = append(reused, r)
	if !slices.Equal(reused, []bool{false, true, true, false, false}) {
		t.Errorf("connection reused %v, want a new one after 3 requests and after idling", reused)
	}
	for rid, want := range map[string][2]any{"k1": {1, false}, "k3": {3, true}, "k4": {1, false}, "k5": {1, false}} {
		tr := truthByID(t, e, func(tr RequestTruth) bool { return tr.ID == rid })
		if tr.ConnRequest != want[0].(int) || tr.ConnClosed != want[1].(bool) {
			t.Errorf("%s: conn request %d closed %v, want %v", rid, tr.ConnRequest, tr.ConnClosed, want)
		}
	}
}

// TestKnobsValidateAndOverride: the new knobs decode as overrides and
// reject negative values.
func TestKnobsValidateAndOverride(t *testing.T) {
	t.Parallel()
	p, err := WithParamOverrides(tinyWith(t, func(*Params) {}), []string{
		"chat_template_tokens=3", "chat_template_message_tokens=4", "reasoning_tokens=5", "tool_call_rate=0.5",
		"stream_interval=4", "no_done=true", "sse_ping=true", "keep_alive_timeout=5s", "keep_alive_max=100",
		"close_after_stream=true",
	})
	if err != nil || p.Validate() != nil {
		t.Fatalf("overrides: %v / %v", err, p.Validate())
	}
	if p.ChatTemplateTokens != 3 || p.ChatTemplateMessageTokens != 4 || p.ReasoningTokens != 5 || p.ToolCallRate != 0.5 ||
		p.StreamInterval != 4 || !p.NoDone || !p.SSEPing || p.KeepAliveTimeout != 5*time.Second || p.KeepAliveMax != 100 || !p.CloseAfterStream {
		t.Errorf("params %+v", p)
	}
	p.ReasoningTokens, p.ToolCallRate, p.KeepAliveTimeout = -1, 2, -time.Second
	err = p.Validate()
	for _, want := range []string{"reasoning_tokens", "tool_call_rate", "keep_alive_timeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want %s", err, want)
		}
	}
	f, err := WithFaultOverrides(Faults{}, []string{"stream_error_rate=0.5"})
	if err != nil || f.StreamErrorRate != 0.5 || f.Validate() != nil {
		t.Errorf("fault override: %+v %v", f, err)
	}
	f.StreamErrorRate = 2
	if f.Validate() == nil {
		t.Error("stream_error_rate 2 validated")
	}
}

// TestCloseAfterStream: with close_after_stream, a streamed response is
// whole, says nothing of closing (no Connection: close; the Keep-Alive
// header still promises reuse), and then the socket closes; a response not
// streamed keeps the connection. Read on one raw connection, so the close is
// seen as the socket's end, not inferred.
func TestCloseAfterStream(t *testing.T) {
	t.Parallel()
	p := tinyWith(t, func(p *Params) { p.CloseAfterStream = true })
	e, ep := startEngine(t, Config{Dialect: DialectLlamaCpp, Params: p})
	u, err := url.Parse(ep.BaseURL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	send := func(rid string, stream bool) *http.Response {
		t.Helper()
		body := chatBody(map[string]any{"messages": []map[string]any{{"role": "user", "content": "a"}}, "max_tokens": 3, "stream": stream})
		req, err := http.NewRequest(http.MethodPost, ep.BaseURL+"/chat/completions", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Request-Id", rid)
		if err := req.Write(conn); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatalf("%s: body: %v", rid, err)
		}
		resp.Body.Close()
		return resp
	}
	whole := send("whole", false)
	streamed := send("streamed", true)
	for _, resp := range []*http.Response{whole, streamed} {
		if resp.Close || resp.Header.Get("Keep-Alive") == "" {
			t.Errorf("status %d: Connection: close %v, Keep-Alive %q: want reuse promised", resp.StatusCode, resp.Close, resp.Header.Get("Keep-Alive"))
		}
	}
	// The stream was whole (read to its end above); then the socket ends.
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the stream: read %q, %v: want the connection closed (EOF)", n, err)
	}
	for rid, want := range map[string]RequestTruth{
		"whole":    {ConnRequest: 1},
		"streamed": {ConnRequest: 2, ConnClosed: true, ConnClose: ConnCloseAfterStream},
	} {
		tr := truthByID(t, e, func(tr RequestTruth) bool { return tr.HeaderID == rid })
		if tr.ConnRequest != want.ConnRequest || tr.ConnClosed != want.ConnClosed || tr.ConnClose != want.ConnClose {
			t.Errorf("%s: conn request %d closed %v (%q), want %d %v (%q)", rid, tr.ConnRequest, tr.ConnClosed, tr.ConnClose, want.ConnRequest, want.ConnClosed, want.ConnClose)
		}
	}
}

// TestIdleCloseOnReuse: with idle_close_on_reuse, a request on a connection
// idle past keep_alive_timeout is not read: the connection closes with no
// answer byte, the engine has no truth of it and counts the close; a request
// on a connection idle less long is served.
func TestIdleCloseOnReuse(t *testing.T) {
	t.Parallel()
	p := tinyWith(t, func(p *Params) { p.KeepAliveTimeout, p.IdleCloseOnReuse = 100*time.Millisecond, true })
	e, ep := startEngine(t, Config{Dialect: DialectVLLM, Params: p})
	u, err := url.Parse(ep.BaseURL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	send := func(rid string) (*http.Response, error) {
		body := chatBody(map[string]any{"messages": []map[string]any{{"role": "user", "content": "a"}}, "max_tokens": 2})
		req, err := http.NewRequest(http.MethodPost, ep.BaseURL+"/chat/completions", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Request-Id", rid)
		if err := req.Write(conn); err != nil {
			return nil, err
		}
		resp, err := http.ReadResponse(br, req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	for _, rid := range []string{"first", "at-once"} {
		if _, err := send(rid); err != nil {
			t.Fatalf("%s: %v", rid, err)
		}
	}
	time.Sleep(150 * time.Millisecond) // past the 100-ms timeout: the outcome does not depend on by how much
	if resp, err := send("idle"); err == nil {
		t.Fatalf("a request on a connection idle past the timeout was answered %d", resp.StatusCode)
	}
	if e.IdleCloses() != 1 {
		t.Errorf("%d idle closes in the truth, want 1", e.IdleCloses())
	}
	for _, tr := range e.Truth() {
		if tr.HeaderID == "idle" {
			t.Errorf("the unread request has a truth: %+v", tr)
		}
	}
}
