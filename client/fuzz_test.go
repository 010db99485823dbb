package client

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

var chunkSeeds = []string{
	`{"id":"a","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}`,
	`{"id":"a","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	`{"id":"a","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":1}}}`,
	`{"id":"a","choices":[{"delta":{"reasoning_content":"hm"}},{"delta":{"content":""}}]}`,
	`{"choices":[{"delta":{"content":null}}],"usage":null}`,
	`{"ID":"b","Choices":[{"Delta":{"Content":"y"}}]}`,
	`{"id":1}`,
	`{"choices":{}}`,
	`{"usage":[1]}`,
	`[]`,
	`null`,
	` {"id" : "a" , "choices" : [ null , {"delta":null,"finish_reason":null} ] } `,
	`{"\u0069d":"x","CHOICES":[{"DELTA":{"CONTENT":"y"},"Finish_Reason":"stop"}]}`,
	`{"choices":[{"delta":{"content":"a","content":""}}]}`,
	`{"choices":[{"delta":{"content":"a"},"delta":{}}]}`,
	`{"usage":{"prompt_tokens":1.5}}`,
	`{"usage":{"prompt_tokens":-9223372036854775808,"completion_tokens":9223372036854775808}}`,
	`{"usage":{"prompt_tokens":1e2}}`,
	`{"usage":{"prompt_tokens_details":null,"prompt_tokens":null}}`,
	`{"x":[[[{"y":[true,false,null,-0.5e+3,"\ud83d\ude00"]}]]]}`,
	`{"\u212a":1,"id":"\ud800"}`,
	`{"choices":[{"finish_reason":""},{"finish_reason":"stop"},{"finish_reason":"length"}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":""}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[]}},{"delta":{"tool_calls":{}}},{"delta":{"tool_calls":null}}]}`,
	`{"choices":[{"delta":{"tool_calls":[1],"tool_calls":[]}}]}`,
	`{"choices":[{"message":{"role":"assistant","content":"x"},"finish_reason":"length"}],"usage":{"completion_tokens":12,"completion_tokens_details":{"reasoning_tokens":5}}}`,
	`{"choices":[{"text":"x","index":0,"logprobs":null,"finish_reason":null}]}`,
	`{"choices":[{"text":7}]}`,
	`{"error":{"code":500,"message":"m","type":"server_error"}}`,
	`{"error":null}`,
	`{"error":"s","error":null}`,
	`{"error":[1]}`,
	`{"choices":[],"timings":{"prompt_n":1,"prompt_ms":0.5},"usage":{"completion_tokens":1}}`,
	`{"timings":[1],"TIMINGS":{"a":1}}`,
	`{"timings":{"a":1},"timings":2}`,
	`{"choices":[{"delta":{"reasoning":"r"},"message":{"content":""}}]}`,
}

// The reference for chunkDecoder: encoding/json into the shape it reads.
type refChunk struct {
	ID      json.RawMessage `json:"id"`
	Choices []refChoice     `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Timings json.RawMessage `json:"timings"`
}

type refChoice struct {
	Delta        refDelta        `json:"delta"`
	Message      refDelta        `json:"message"`
	Text         json.RawMessage `json:"text"`
	FinishReason json.RawMessage `json:"finish_reason"`
}

type refDelta struct {
	Content          json.RawMessage `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	ToolCalls        json.RawMessage `json:"tool_calls"`
}

func (d refDelta) strings() bool {
	return stringOrNull(d.Content) && stringOrNull(d.ReasoningContent) && stringOrNull(d.Reasoning)
}

// hasCall reports a tool_calls array with an element.
func (d refDelta) hasCall() bool {
	var calls []json.RawMessage
	return len(d.ToolCalls) > 0 && d.ToolCalls[0] == '[' && json.Unmarshal(d.ToolCalls, &calls) == nil && len(calls) > 0
}

func stringOrNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null" || raw[0] == '"'
}

// refDecode is what encoding/json says of data, as a snapshot.
func refDecode(data []byte) snapshot {
	var c refChunk
	if obj := bytes.TrimLeft(data, " \t\r\n"); len(obj) == 0 || obj[0] != '{' || json.Unmarshal(data, &c) != nil || !stringOrNull(c.ID) {
		return snapshot{}
	}
	s := snapshot{ok: true}
	if nonEmptyString(c.ID) {
		s.id = string(c.ID)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		s.err = string(c.Error)
	}
	if len(c.Timings) > 0 && c.Timings[0] == '{' {
		s.timings = string(c.Timings)
	}
	for _, ch := range c.Choices {
		d, m := ch.Delta, ch.Message
		if !d.strings() || !m.strings() || !stringOrNull(ch.Text) || !stringOrNull(ch.FinishReason) {
			return snapshot{}
		}
		s.content = s.content || nonEmptyString(d.Content) || nonEmptyString(m.Content) || nonEmptyString(ch.Text)
		s.reasoning = s.reasoning || nonEmptyString(d.ReasoningContent) || nonEmptyString(d.Reasoning) ||
			nonEmptyString(m.ReasoningContent) || nonEmptyString(m.Reasoning)
		s.tool = s.tool || d.hasCall() || m.hasCall()
		if s.finish == "" && nonEmptyString(ch.FinishReason) {
			s.finish = string(ch.FinishReason)
		}
	}
	if len(c.Usage) > 0 && string(c.Usage) != "null" {
		if c.Usage[0] != '{' || json.Unmarshal(c.Usage, &s.usage) != nil {
			return snapshot{}
		}
		s.hasUse = true
	}
	return s
}

// repeatsChoices reports a top-level "choices" key given more than once,
// the one case where chunkDecoder and encoding/json part ways (documented).
func repeatsChoices(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return false
	}
	n := 0
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
		if key, _ := k.(string); bytes.EqualFold([]byte(key), []byte("choices")) {
			n++
		}
	}
	return n > 1
}

// snapshot copies a view out of the decoder's reused memory.
type snapshot struct {
	ok        bool
	content   bool
	reasoning bool
	tool      bool
	finish    string
	id        string
	usage     wireUsage
	hasUse    bool
	err       string
	timings   string
}

func snap(v chunkView, err error) snapshot {
	if err != nil {
		return snapshot{}
	}
	s := snapshot{ok: true, content: v.content, reasoning: v.reasoning, tool: v.tool, finish: string(v.finish), id: string(v.id),
		hasUse: v.hasUsage, err: string(v.err), timings: string(v.timings)}
	if v.hasUsage {
		s.usage = *v.usage
	}
	return s
}

func FuzzChunkDecode(f *testing.F) {
	// Every seed is decoded, each after one of the first few.
	for _, data := range chunkSeeds {
		for _, first := range chunkSeeds[:4] {
			f.Add([]byte(first), []byte(data))
		}
	}
	f.Fuzz(func(t *testing.T, first, data []byte) {
		var fresh chunkDecoder
		got := snap(fresh.decode(data))

		// A decoder that saw another chunk first must say the same.
		var reused chunkDecoder
		_, _ = reused.decode(first)
		if again := snap(reused.decode(data)); again != got {
			t.Fatalf("after %q, decode(%q) = %+v; a fresh decoder says %+v", first, data, again, got)
		}
		if got.ok && !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		if repeatsChoices(data) {
			return
		}
		if want := refDecode(data); got != want {
			t.Fatalf("decode(%q) = %+v; encoding/json says %+v", data, got, want)
		}
	})
}

func FuzzAddMembers(f *testing.F) {
	f.Add([]byte(`{"model":"m","stream":true}`), "req-1")
	f.Add([]byte(`{}`), `a"b\`)
	f.Add([]byte(" { } \n"), "\u2028")
	f.Fuzz(func(t *testing.T, body []byte, id string) {
		var before map[string]any
		if json.Unmarshal(body, &before) != nil || before == nil {
			return // addMembers is given go-openai's marshalled objects only
		}
		if _, ok := before["rid"]; ok {
			return
		}
		quoted, _ := json.Marshal(id)
		members := append([]byte(`,"max_tokens":5,"rid":`), quoted...)
		out, err := addMembers(body, members)
		if err != nil {
			t.Fatalf("addMembers(%q): %v", body, err)
		}
		var after map[string]any
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("addMembers(%q) = %q: not JSON: %v", body, out, err)
		}
		// encoding/json replaces invalid UTF-8 when decoding; compare like with like.
		var wantID string
		_ = json.Unmarshal(quoted, &wantID)
		if after["rid"] != wantID || after["max_tokens"] != 5.0 || len(after) != len(before)+2 {
			t.Fatalf("addMembers(%q) = %q: members missing or others lost", body, out)
		}
	})
}

// bodyTransport answers every request with a 200 and body.
type bodyTransport []byte

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(b)),
		Request:    r,
	}, nil
}

var knownClasses = map[ErrorClass]bool{
	ErrNone: true, ErrConnect: true, ErrHTTPStatus: true, ErrTimeout: true,
	ErrStreamBroken: true, ErrMalformedChunk: true, ErrCanceled: true, ErrContentEncoding: true,
}

func FuzzStream(f *testing.F) {
	f.Add([]byte(strings.Join(fullStream("s", 3), "")))
	f.Add([]byte(strings.Join(fullStream("s", 1)[:3], "")))
	f.Add([]byte(contentEvent("s", "a") + "data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n" + finishEvent("s", "stop") + doneEvent))
	f.Add([]byte(": keep-alive\n\n" + contentEvent("s", "a") + "data: {\"error\":{\"message\":\"x\"}}\n\n"))
	f.Add([]byte(contentEvent("s", "a") + contentEvent("s", "b") + finishEvent("s", "stop") + usageEvent("s", 3, 5, 0)))
	f.Add([]byte(`data: {"choices":[{"delta":{"reasoning_content":"r"}}]}` + "\n\n" + contentEvent("s", "a") + finishEvent("s", "stop") + doneEvent))
	for _, s := range sseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := New(Config{
			BaseURL: "http://engine.test/v1", Model: "m", Dialect: "vllm", Start: time.Now(),
			HTTPClient: &http.Client{Transport: bodyTransport(body)},
		})
		if err != nil {
			t.Fatal(err)
		}
		rec := c.Do(t.Context(), request("r"))

		if !knownClasses[rec.ErrorClass] {
			t.Fatalf("unknown class %q", rec.ErrorClass)
		}
		if rec.ID != "r" || rec.Status != http.StatusOK || rec.End < rec.Sent {
			t.Fatalf("record lost: id %q status %d sent %v end %v", rec.ID, rec.Status, rec.Sent, rec.End)
		}
		for i := 1; i < len(rec.Chunks); i++ {
			if rec.Chunks[i].At < rec.Chunks[i-1].At || rec.Chunks[i].Tokens < 1 {
				t.Fatalf("chunk %d out of order or without tokens: %+v", i, rec.Chunks)
			}
		}
		if rec.OK() && (rec.FinishReason == "" || !bytes.Contains(body, []byte(doneMarker)) && !rec.NoDone) {
			t.Fatalf("success without a finish reason, or without [DONE] and not saying so: %+v", rec)
		}
		if rec.NoDone && !rec.OK() {
			t.Fatalf("NoDone on a failure: %+v", rec)
		}
		if rec.FirstContent != 0 && (rec.FirstContent < rec.FirstToken || rec.FirstToken == 0) {
			t.Fatalf("first content %v before first token %v", rec.FirstContent, rec.FirstToken)
		}
		if rec.TokenSource == TokensFromUsage && rec.TokensPerChunkSource == ChunkTokensUsageTotal {
			sum := 0
			for _, ch := range rec.Chunks {
				sum += int(ch.Tokens)
			}
			if sum != rec.OutputTokens {
				t.Fatalf("chunks hold %d tokens, usage says %d", sum, rec.OutputTokens)
			}
		}
		if rec.TokenSource == TokensFromChunks && rec.OutputTokens < len(rec.Chunks) {
			t.Fatalf("%d tokens counted from %d chunks", rec.OutputTokens, len(rec.Chunks))
		}
	})
}
