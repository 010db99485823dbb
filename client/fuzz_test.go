package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
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
	// Issue 21: parts arrays, several choices, huge and float-shaped numbers.
	`{"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"x"}]}}]}`,
	`{"choices":[{"delta":{"content":[{"type":"text","text":""},{"type":"image_url","image_url":{"url":"u"}}]}}]}`,
	`{"choices":[{"delta":{"content":["plain",1,null,[]],"reasoning_content":[{"TEXT":"r","text":null}]}}]}`,
	`{"choices":[{"message":{"content":[{"text":7}]}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"},"finish_reason":"stop"}]}`,
	`{"choices":[{"index":63,"delta":{"content":"a"}},{"index":64,"delta":{"content":"b"}},{"index":-1},{"index":1.5},{"index":"0"},{"index":null}]}`,
	`{"choices":[{"index":1e0,"index":2}],"choices":[{"index":3,"index":null}]}`,
	`{"usage":{"completion_tokens":1e18,"prompt_tokens":-0}}`,
	`{"usage":{"completion_tokens":1000000000000000000,"prompt_tokens":-5}}`,
	`{"usage":{"completion_tokens":"12","prompt_tokens":true,"prompt_tokens_details":{"cached_tokens":[1]}}}`,
	`{"usage":{"completion_tokens":1.5,"completion_tokens":3}}`,
	`{"usage":{"completion_tokens":1.5},"usage":{"completion_tokens":3}}`,
	`{"usage":{"completion_tokens":99999999999999999999999}}`,
	`{"object":"error","message":"m","type":"BadRequestError","code":400}`,
	`{"object":"chat.completion.chunk","message":"m","choices":[{"delta":{}}]}`,
	`{"detail":[{"msg":"x"}],"usage":null,"choices":null}`,
	`{"message":null,"Detail":"d","object":7}`,
	`{"message":"m","usage":{"completion_tokens":1}}`,
}

// The reference for chunkDecoder: encoding/json into the shape it reads,
// with the decoder's own rules where it departs from encoding/json (parts
// arrays, lenient token counts and indices) stated plainly.
type refChunk struct {
	ID      json.RawMessage `json:"id"`
	Choices []*refChoice    `json:"choices"` // a null choice is nil: no choice
	Usage   json.RawMessage `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Timings json.RawMessage `json:"timings"`
	// An error not wrapped in "error": "object":"error", or "message" or
	// "detail" in a chunk with no choice and no usage.
	Object  json.RawMessage `json:"object"`
	Message json.RawMessage `json:"message"`
	Detail  json.RawMessage `json:"detail"`
}

type refChoice struct {
	Index        refIndex        `json:"index"`
	Delta        refDelta        `json:"delta"`
	Message      refDelta        `json:"message"`
	Text         json.RawMessage `json:"text"`
	FinishReason json.RawMessage `json:"finish_reason"`
}

// refIndex is a choice's index: null leaves it, an integer in [0, 64) is
// it, anything else is -1.
type refIndex int

func (x *refIndex) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || n < 0 || n >= maxChoices {
		*x = badChoiceIndex
		return nil
	}
	*x = refIndex(n)
	return nil
}

// refCount is a token count: null leaves it, an int is it, anything else
// is 0 and marks the count bad (for good: a later value does not clear it).
type refCount struct {
	n   int
	bad bool
}

func (c *refCount) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		c.n, c.bad = 0, true
		return nil
	}
	c.n = int(n)
	return nil
}

type refUsage struct {
	PromptTokens        refCount `json:"prompt_tokens"`
	CompletionTokens    refCount `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens refCount `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens refCount `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

type refDelta struct {
	Content          json.RawMessage `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	ToolCalls        json.RawMessage `json:"tool_calls"`
}

func (d refDelta) strings() bool {
	return textOK(d.Content) && textOK(d.ReasoningContent) && textOK(d.Reasoning)
}

// hasCall reports a tool_calls array with an element.
func (d refDelta) hasCall() bool {
	var calls []json.RawMessage
	return len(d.ToolCalls) > 0 && d.ToolCalls[0] == '[' && json.Unmarshal(d.ToolCalls, &calls) == nil && len(calls) > 0
}

func stringOrNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null" || raw[0] == '"'
}

// textOK: a text field is a string, null, or an array of parts whose
// object elements have a string or null "text".
func textOK(raw json.RawMessage) bool {
	if stringOrNull(raw) {
		return true
	}
	_, ok := refParts(raw)
	return ok
}

// refParts says whether raw, an array of parts, holds text: a non-empty
// string element, or an object element whose "text" is a non-empty string.
func refParts(raw json.RawMessage) (text, ok bool) {
	var parts []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return false, false
	}
	for _, p := range parts {
		switch p[0] {
		case '"':
			text = text || nonEmptyString(p)
		case '{':
			var part struct {
				Text json.RawMessage `json:"text"`
			}
			if json.Unmarshal(p, &part) != nil || !stringOrNull(part.Text) {
				return false, false
			}
			text = text || nonEmptyString(part.Text)
		}
	}
	return text, true
}

// hasText reports a text field holding text: a non-empty string, or parts
// with text.
func hasText(raw json.RawMessage) bool {
	if len(raw) > 0 && raw[0] == '[' {
		text, _ := refParts(raw)
		return text
	}
	return nonEmptyString(raw)
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
	var choices []choiceView
	for _, ch := range c.Choices {
		if ch == nil {
			continue
		}
		d, m := ch.Delta, ch.Message
		if !d.strings() || !m.strings() || !stringOrNull(ch.Text) || !stringOrNull(ch.FinishReason) {
			return snapshot{}
		}
		cv := choiceView{index: int(ch.Index),
			content:   hasText(d.Content) || hasText(m.Content) || nonEmptyString(ch.Text),
			reasoning: hasText(d.ReasoningContent) || hasText(d.Reasoning) || hasText(m.ReasoningContent) || hasText(m.Reasoning),
			tool:      d.hasCall() || m.hasCall()}
		if nonEmptyString(ch.FinishReason) {
			cv.finish = ch.FinishReason
		}
		choices = append(choices, cv)
		s.content = s.content || cv.content
		s.reasoning = s.reasoning || cv.reasoning
		s.tool = s.tool || cv.tool
		if s.finish == "" && cv.finish != nil {
			s.finish = string(cv.finish)
		}
	}
	s.choices = choicesString(choices)
	present := func(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }
	hasUsage := present(c.Usage)
	if s.err == "" && (string(c.Object) == `"error"` || (present(c.Message) || present(c.Detail)) && len(choices) == 0 && !hasUsage) {
		s.err = string(data)
	}
	if hasUsage {
		var u refUsage
		if c.Usage[0] != '{' || json.Unmarshal(c.Usage, &u) != nil {
			return snapshot{}
		}
		s.hasUse = true
		s.usage = wireUsage{PromptTokens: u.PromptTokens.n, CompletionTokens: u.CompletionTokens.n}
		s.usage.PromptTokensDetails.CachedTokens = u.PromptTokensDetails.CachedTokens.n
		s.usage.CompletionTokensDetails.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens.n
		s.usageBad = u.PromptTokens.bad || u.CompletionTokens.bad || u.PromptTokensDetails.CachedTokens.bad ||
			u.CompletionTokensDetails.ReasoningTokens.bad
	}
	return s
}

// choicesString renders choices comparably.
func choicesString(cs []choiceView) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "[%d %t %t %t %s]", c.index, c.content, c.reasoning, c.tool, c.finish)
	}
	return b.String()
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
	usageBad  bool
	err       string
	timings   string
	choices   string
}

func snap(v chunkView, err error) snapshot {
	if err != nil {
		return snapshot{}
	}
	s := snapshot{ok: true, content: v.content, reasoning: v.reasoning, tool: v.tool, finish: string(v.finish), id: string(v.id),
		hasUse: v.hasUsage, usageBad: v.usageBad, err: string(v.err), timings: string(v.timings), choices: choicesString(v.choices)}
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
	// Issue 21: parts, two choices, claims beyond the request, violations.
	f.Add([]byte(`data: {"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"a"}]}}]}` + "\n\n" + finishEvent("s", "stop") + doneEvent))
	f.Add([]byte(`data: {"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}` + "\n\n" +
		`data: {"choices":[{"index":1,"delta":{"content":"c"},"finish_reason":"stop"}]}` + "\n\n" + finishEvent("s", "stop") + usageEvent("s", 3, 3, 0) + doneEvent))
	f.Add([]byte(contentEvent("s", "a") + contentEvent("s", "b") + finishEvent("s", "stop") + usageEvent("s", 3, 1000000000000000000, 0) + doneEvent))
	f.Add([]byte(contentEvent("s", "a") + finishEvent("s", "stop") + contentEvent("s", "b") + usageEvent("s", -3, -5, 0) + doneEvent))
	f.Add([]byte(`data: {"choices":[{"delta":{"content":"a"}}],"usage":{"completion_tokens":5}}` + "\n\n" +
		`data: {"choices":[{"delta":{"content":"a"}}],"usage":{"completion_tokens":2}}` + "\n\n" + finishEvent("s", "stop") + doneEvent))
	f.Add([]byte(`data: {"object":"error","message":"m\u001b[2J"}` + "\n\n"))
	for _, s := range sseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		// Odd lengths ask for two choices.
		n := 1 + len(body)%2
		c, err := New(Config{
			BaseURL: "http://engine.test/v1", Model: "m", Dialect: "vllm", Start: time.Now(),
			HTTPClient: &http.Client{Transport: bodyTransport(body)}, ExtraBody: map[string]any{"n": n},
		})
		if err != nil {
			t.Fatal(err)
		}
		rec := c.Do(t.Context(), request("r"))
		// Whatever the server claimed, the figures are bounded by the
		// request and never negative.
		if rec.OutputTokens < 0 || rec.PromptTokens < 0 || rec.CachedTokens < 0 || rec.ReasoningTokens < 0 {
			t.Fatalf("negative counts: %+v", rec)
		}
		if capN, _ := UsageCaps(rec.MaxTokens, n, 0); rec.OutputTokens > max(capN, len(rec.Chunks)) || len(rec.ITLs(nil)) > max(capN, len(rec.Chunks)) {
			t.Fatalf("%d output tokens, %d ITLs for max_tokens %d × %d choices", rec.OutputTokens, len(rec.ITLs(nil)), rec.MaxTokens, n)
		}
		for _, v := range rec.Violations {
			if !slices.Contains(Violations(), v) {
				t.Fatalf("unknown violation %q", v)
			}
		}
		if rec.Choices > n || rec.Choices == 1 {
			t.Fatalf("%d choices for n = %d", rec.Choices, n)
		}
		for _, ch := range rec.Chunks {
			if ch.Choice < 0 || int(ch.Choice) >= n {
				t.Fatalf("a chunk of choice %d for n = %d", ch.Choice, n)
			}
		}
		if strings.ContainsAny(rec.Error, "\x1b\x07\u009b") {
			t.Fatalf("a terminal escape in the error %q", rec.Error)
		}

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
