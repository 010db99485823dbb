package client

import (
	"bytes"
	"encoding/json"
	"testing"
)

var respSeeds = []string{
	`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[],"usage":null}}`,
	`{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"hi","logprobs":[]}`,
	`{"type":"response.output_text.delta","delta":""}`,
	`{"type":"response.reasoning_text.delta","delta":"hm"}`,
	`{"type":"response.reasoning_summary_text.delta","summary_index":0,"delta":"s"}`,
	`{"type":"response.function_call_arguments.delta","delta":"{\"a\""}`,
	`{"type":"response.refusal.delta","delta":"no"}`,
	`{"type":"response.output_item.added","item":{"type":"function_call","name":"f","arguments":""}}`,
	`{"type":"response.completed","response":{"id":"resp_1","status":"completed","incomplete_details":null,"error":null,` +
		`"output":[{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"r"}]},{"type":"message","content":[{"type":"output_text","text":"x","annotations":[]}]}],` +
		`"usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":2},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":3},"total_tokens":12}}}`,
	`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"function_call","arguments":"{}"}]}}`,
	`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}`,
	`{"type":"error","code":"ERR","message":"m","param":null,"sequence_number":3}`,
	`{"error":{"message":"m"}}`,
	`{"message":"no type"}`,
	`{"type":null,"detail":"d","message":null}`,
	`{"TYPE":"response.output_text.delta","Delta":"x","type":"response.completed"}`,
	`{"type":"\u0072esponse.output_text.delta","delta":"\u0000"}`,
	`{"type":"\u0072\u0065\u0073\u0070\u006f\u006e\u0073\u0065\u002e\u0072\u0065\u0061\u0073\u006f\u006e\u0069\u006e\u0067\u005f\u0073\u0075\u006d\u006d\u0061\u0072\u0079\u005f\u0074\u0065\u0078\u0074\u002e\u0064\u0065\u006c\u0074\u0061","delta":"d"}`,
	`{"type":5}`,
	`{"delta":5,"response":[]}`,
	`{"response":{"usage":{"input_tokens":1.5,"output_tokens":"3"}}}`,
	`{"response":{"usage":{"input_tokens":1}},"response":{"status":"completed"}}`,
	`{"response":{"usage":{"input_tokens":1}},"response":{"usage":null}}`,
	`{"response":{"output":[null,{"type":"message","content":[1,"s",{"text":null},{"refusal":"r"}]}]}}`,
	`{"response":{"output":[{"type":"message","content":{"text":"x"}}]}}`,
	`{"response":{"output":[7]}}`,
	`{"response":{"output":[{"type":"message","content":[{"text":7}]}]}}`,
	`{"response":{"output":[{"type":"reasoning","summary":[{"type":"summary_text","text":"s"}]}]}}`,
	`{"response":{"output":[{"content":[{"text":"x"}],"type":"message","type":"reasoning"}]}}`,
	`{"response":{"incomplete_details":{"reason":5}}}`,
	`{"response":{"incomplete_details":[],"id":"x"}}`,
	`{"response":null,"error":null}`,
	// Whole responses.
	`{"id":"resp_2","object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"x"}]}],"usage":{"input_tokens":3,"output_tokens":1}}`,
	`{"object":"error","message":"m","type":"BadRequestError","code":400}`,
	`{"detail":[{"msg":"x"}]}`,
	`{"message":"m","status":"completed"}`,
	`{"status":7}`,
	`[]`,
	`null`,
	` {"type" : "response.output_text.delta" , "delta" : "a" } `,
}

// refResponse is the reference for a Responses response object:
// encoding/json into the shape respDecode reads.
type refResponse struct {
	ID                json.RawMessage `json:"id"`
	Status            json.RawMessage `json:"status"`
	IncompleteDetails struct {
		Reason json.RawMessage `json:"reason"`
	} `json:"incomplete_details"`
	Error  json.RawMessage   `json:"error"`
	Usage  json.RawMessage   `json:"usage"`
	Output []json.RawMessage `json:"output"` // raw: a repeated output replaces the earlier, as respDecode's does
	// A whole response's own error words.
	Object  json.RawMessage `json:"object"`
	Message json.RawMessage `json:"message"`
	Detail  json.RawMessage `json:"detail"`
}

type refRespEvent struct {
	Type     json.RawMessage `json:"type"`
	Delta    json.RawMessage `json:"delta"`
	Response refResponse     `json:"response"`
	Error    json.RawMessage `json:"error"`
	Message  json.RawMessage `json:"message"`
	Detail   json.RawMessage `json:"detail"`
}

// respSnapshot copies a respView out of the decoder's reused memory.
type respSnapshot struct {
	ok                       bool
	typ                      respType
	hasTyp, delta            bool
	id, status, reason, err  string
	hasUsage, usageBad       bool
	usage                    wireUsage
	content, reasoning, tool bool
}

func respSnap(v respView, err error) respSnapshot {
	if err != nil {
		return respSnapshot{}
	}
	s := respSnapshot{ok: true, typ: v.typ, hasTyp: v.hasTyp, delta: v.delta, id: string(v.id), status: string(v.status),
		reason: string(v.reason), err: string(v.err), hasUsage: v.hasUsage, usageBad: v.usageBad,
		content: v.content, reasoning: v.reasoning, tool: v.tool}
	if v.hasUsage {
		s.usage = *v.usage
	}
	return s
}

func presentRaw(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// rawOrNil is a string member as respView keeps it: nil for null.
func rawOrNil(raw json.RawMessage) string {
	if !presentRaw(raw) {
		return ""
	}
	return string(raw)
}

// refRespDecode is what encoding/json says of data.
func refRespDecode(data []byte, whole bool) respSnapshot {
	if obj := bytes.TrimLeft(data, " \t\r\n"); len(obj) == 0 || obj[0] != '{' {
		return respSnapshot{}
	}
	var r refResponse
	var ev refRespEvent
	s := respSnapshot{ok: true}
	if whole {
		if json.Unmarshal(data, &r) != nil {
			return respSnapshot{}
		}
	} else {
		if json.Unmarshal(data, &ev) != nil || !stringOrNull(ev.Type) {
			return respSnapshot{}
		}
		r = ev.Response
		if presentRaw(ev.Type) {
			var name string
			_ = json.Unmarshal(ev.Type, &name)
			s.hasTyp, s.typ = true, classifyResp([]byte(name))
		}
		s.delta = nonEmptyString(ev.Delta)
	}
	if !stringOrNull(r.ID) || !stringOrNull(r.Status) || !stringOrNull(r.IncompleteDetails.Reason) {
		return respSnapshot{}
	}
	if nonEmptyString(r.ID) {
		s.id = string(r.ID)
	}
	s.status, s.reason = rawOrNil(r.Status), rawOrNil(r.IncompleteDetails.Reason)
	for _, raw := range r.Output {
		if string(raw) == "null" {
			continue
		}
		var item struct {
			Type             json.RawMessage `json:"type"`
			Content, Summary json.RawMessage
		}
		if raw[0] != '{' || json.Unmarshal(raw, &item) != nil || !stringOrNull(item.Type) {
			return respSnapshot{}
		}
		text, ok1 := refRespParts(item.Content)
		summary, ok2 := refRespParts(item.Summary)
		if !ok1 || !ok2 {
			return respSnapshot{}
		}
		var typ string
		_ = json.Unmarshal(item.Type, &typ)
		switch typ {
		case "message":
			s.content = s.content || text
		case "reasoning":
			s.reasoning = s.reasoning || text || summary
		case "function_call", "custom_tool_call":
			s.tool = true
		}
	}
	if presentRaw(r.Usage) {
		var u struct {
			InputTokens        refCount `json:"input_tokens"`
			OutputTokens       refCount `json:"output_tokens"`
			InputTokensDetails struct {
				CachedTokens refCount `json:"cached_tokens"`
			} `json:"input_tokens_details"`
			OutputTokensDetails struct {
				ReasoningTokens refCount `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		}
		if r.Usage[0] != '{' || json.Unmarshal(r.Usage, &u) != nil {
			return respSnapshot{}
		}
		s.hasUsage = true
		s.usage = wireUsage{PromptTokens: u.InputTokens.n, CompletionTokens: u.OutputTokens.n}
		s.usage.PromptTokensDetails.CachedTokens = u.InputTokensDetails.CachedTokens.n
		s.usage.CompletionTokensDetails.ReasoningTokens = u.OutputTokensDetails.ReasoningTokens.n
		s.usageBad = u.InputTokens.bad || u.OutputTokens.bad || u.InputTokensDetails.CachedTokens.bad || u.OutputTokensDetails.ReasoningTokens.bad
	}
	switch {
	case presentRaw(ev.Error):
		s.err = string(ev.Error)
	case presentRaw(r.Error):
		s.err = string(r.Error)
	case whole && (string(r.Object) == `"error"` || (presentRaw(r.Message) || presentRaw(r.Detail)) && !presentRaw(r.Status) && !s.hasUsage),
		!whole && (presentRaw(ev.Message) || presentRaw(ev.Detail)) && !s.hasTyp:
		s.err = string(data)
	}
	return s
}

// refRespParts says whether a content or summary value holds text: an
// array whose object elements' "text" or "refusal" is a non-empty string
// (each a string or null); any other value holds none.
func refRespParts(raw json.RawMessage) (text, ok bool) {
	var parts []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' {
		return false, true
	}
	if json.Unmarshal(raw, &parts) != nil {
		return false, false
	}
	for _, p := range parts {
		if p[0] != '{' {
			continue
		}
		var part struct{ Text, Refusal json.RawMessage }
		if json.Unmarshal(p, &part) != nil || !stringOrNull(part.Text) || !stringOrNull(part.Refusal) {
			return false, false
		}
		text = text || nonEmptyString(part.Text) || nonEmptyString(part.Refusal)
	}
	return text, true
}

// FuzzResponsesEvent holds the Responses decoder to encoding/json, as an
// event and as a whole response: the same verdict and the same fields on
// every input; a decoder reused after any other line answers as a fresh
// one; invalid JSON is never accepted.
func FuzzResponsesEvent(f *testing.F) {
	for _, s := range respSeeds {
		f.Add([]byte(s))
	}
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	var reused chunkDecoder
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, whole := range []bool{false, true} {
			var fresh chunkDecoder
			got := respSnap(fresh.respDecode(data, whole))
			if got.ok && !json.Valid(data) {
				t.Fatalf("whole %v: accepted invalid JSON %q", whole, data)
			}
			if want := refRespDecode(data, whole); got != want {
				t.Fatalf("whole %v: %q\n got %+v\nwant %+v", whole, data, got, want)
			}
			if again := respSnap(reused.respDecode(data, whole)); again != got {
				t.Fatalf("whole %v: a reused decoder said %+v, a fresh one %+v", whole, again, got)
			}
			// The chunk decoder after a Responses line answers as a fresh one too.
			var freshChunk chunkDecoder
			if a, b := snap(reused.decode(data)), snap(freshChunk.decode(data)); a != b {
				t.Fatalf("the chunk decoder after a Responses line said %+v, a fresh one %+v", a, b)
			}
		}
	})
}

// TestResponsesDecodeSeeds pins what the seeds say, beside the fuzz
// target's agreement with encoding/json.
func TestResponsesDecodeSeeds(t *testing.T) {
	t.Parallel()
	var d chunkDecoder
	for _, c := range []struct {
		data                     string
		typ                      respType
		delta, usage             bool
		status, reason           string
		err                      bool
		content, reasoning, tool bool
	}{
		{data: respSeeds[1], typ: respText, delta: true},
		{data: respSeeds[2], typ: respText},
		{data: respSeeds[4], typ: respReasoning, delta: true},
		{data: respSeeds[5], typ: respToolArgs, delta: true},
		{data: respSeeds[8], typ: respCompleted, usage: true, status: `"completed"`, content: true, reasoning: true},
		{data: respSeeds[9], typ: respIncomplete, status: `"incomplete"`, reason: `"max_output_tokens"`, tool: true},
		{data: respSeeds[10], typ: respFailed, status: `"failed"`, err: true},
		{data: respSeeds[11], typ: respError},
		{data: respSeeds[13], err: true},
		{data: respSeeds[16], typ: respText, delta: true},
		{data: respSeeds[17], typ: respReasoning, delta: true},
	} {
		v, err := d.respDecode([]byte(c.data), false)
		if err != nil || v.typ != c.typ || v.delta != c.delta || v.hasUsage != c.usage || string(v.status) != c.status ||
			string(v.reason) != c.reason || (v.err != nil) != c.err || v.content != c.content || v.reasoning != c.reasoning || v.tool != c.tool {
			t.Errorf("%s: %+v, %v", c.data, v, err)
		}
	}
	v, err := d.respDecode([]byte(respSeeds[8]), false)
	if err != nil || v.usage.PromptTokens != 5 || v.usage.CompletionTokens != 7 || v.usage.PromptTokensDetails.CachedTokens != 2 ||
		v.usage.CompletionTokensDetails.ReasoningTokens != 3 || string(v.id) != `"resp_1"` {
		t.Errorf("usage %+v id %s, %v", v.usage, v.id, err)
	}
}

// TestResponsesDecodeAllocs: an event costs no allocation.
func TestResponsesDecodeAllocs(t *testing.T) {
	var d chunkDecoder
	lines := [][]byte{[]byte(respSeeds[1]), []byte(respSeeds[8]), []byte(respSeeds[0])}
	allocs := testing.AllocsPerRun(100, func() {
		for _, l := range lines {
			if _, err := d.respDecode(l, false); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per decode of %d events, want 0", allocs, len(lines))
	}
}

// BenchmarkResponsesDecode is BenchmarkChunkDecode for a Responses
// output_text.delta event as vLLM writes it (event: line, type, sequence
// number, item id, indices, delta, logprobs).
func BenchmarkResponsesDecode(b *testing.B) {
	event := []byte(textDeltaBench)
	r := bytes.NewReader(event)
	sr := newSSEReader(r)
	var dec chunkDecoder
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(event)
		sr.r, sr.w, sr.rerr = 0, 0, nil
		ev, err := sr.next()
		if err != nil {
			b.Fatal(err)
		}
		v, err := dec.respDecode(ev.data, false)
		if err != nil || v.typ != respText || !v.delta {
			b.Fatal("not a text delta", err)
		}
	}
}

const textDeltaBench = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":12," +
	"\"item_id\":\"msg_0123456789abcdef0123456789abcdef\",\"output_index\":1,\"content_index\":0,\"delta\":\" tok\",\"logprobs\":[]}\n\n"
