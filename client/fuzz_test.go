package client

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// goOpenAIData is go-openai's own data-line pattern (stream_reader.go).
var goOpenAIData = regexp.MustCompile(`^data:\s*`)

// refDone is the plain statement of what doneDetector computes: some
// complete line, trimmed of ASCII whitespace, is `data:`, RE2 \s*, "[DONE]".
func refDone(data []byte) bool {
	lines := bytes.Split(data, []byte("\n"))
	for _, l := range lines[:len(lines)-1] { // the last piece has no '\n'
		l = bytes.Trim(l, " \t\v\f\r")
		if goOpenAIData.Match(l) && string(goOpenAIData.ReplaceAll(l, nil)) == doneMarker {
			return true
		}
	}
	return false
}

var sseSeeds = []string{
	"data: [DONE]\n",
	"data:[DONE]\r\n",
	"  data: \t[DONE] \v\r\n",
	"data: [DONE]",
	"data: [DONE]x\n",
	"data:\v[DONE]\n",
	"data: [DON\ndata: [DONE]\n",
	": ping\n\ndata: {\"id\":\"x\"}\n\ndata: [DONE]\n\n",
	"event: message\ndata: [DONE] [DONE]\n",
	"dat: [DONE]\n",
}

func FuzzDoneDetector(f *testing.F) {
	for _, s := range sseSeeds {
		f.Add([]byte(s), uint16(3), uint16(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut1, cut2 uint16) {
		// Feed the bytes in three pieces, as reads would.
		a := min(int(cut1), len(data))
		b := min(a+int(cut2), len(data))
		var d doneDetector
		d.scan(data[:a])
		d.scan(data[a:b])
		d.scan(data[b:])
		if want := refDone(data); d.done != want {
			t.Errorf("done = %v, reference says %v for %q (cuts %d, %d)", d.done, want, data, a, b)
		}
	})
}

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
}

// goOpenAIView is what go-openai's full decoding says of data.
type goOpenAIView struct {
	content bool
	finish  string
	id      string
	usage   *openai.Usage
}

func decodeWithGoOpenAI(data []byte) (goOpenAIView, bool) {
	var r openai.ChatCompletionStreamResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return goOpenAIView{}, false
	}
	v := goOpenAIView{id: r.ID, usage: r.Usage}
	for _, ch := range r.Choices {
		if ch.Delta.Content != "" || ch.Delta.ReasoningContent != "" {
			v.content = true
		}
		if v.finish == "" && ch.FinishReason != "" {
			v.finish = string(ch.FinishReason)
		}
	}
	return v, true
}

// snapshot copies a view out of the decoder's reused memory.
type snapshot struct {
	ok      bool
	content bool
	finish  string
	id      string
	usage   wireUsage
	hasUse  bool
}

func snap(v chunkView, err error) snapshot {
	s := snapshot{ok: err == nil, content: v.content, finish: string(v.finish), id: string(v.id), hasUse: v.hasUsage}
	if v.hasUsage {
		s.usage = *v.usage
	}
	return s
}

func FuzzChunkDecode(f *testing.F) {
	for _, a := range chunkSeeds {
		for _, b := range chunkSeeds[:4] {
			f.Add([]byte(a), []byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, first, data []byte) {
		var fresh chunkDecoder
		want := snap(fresh.decode(data))

		// A decoder that saw another chunk first must say the same.
		var reused chunkDecoder
		_, _ = reused.decode(first)
		if got := snap(reused.decode(data)); got != want {
			t.Fatalf("after %q, decode(%q) = %+v; a fresh decoder says %+v", first, data, got, want)
		}
		if !want.ok {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		ref, ok := decodeWithGoOpenAI(data)
		if !ok {
			return
		}
		if ref.content && !want.content {
			t.Errorf("go-openai sees content in %q, the decoder does not", data)
		}
		if fin := unquoteOrEmpty(want.finish); fin != ref.finish {
			t.Errorf("finish_reason %q, go-openai says %q", fin, ref.finish)
		}
		if id := unquoteOrEmpty(want.id); id != ref.id {
			t.Errorf("id %q, go-openai says %q", id, ref.id)
		}
		if (ref.usage != nil) != want.hasUse {
			t.Fatalf("usage present %v, go-openai says %v", want.hasUse, ref.usage != nil)
		}
		if ref.usage != nil {
			cached := 0
			if ref.usage.PromptTokensDetails != nil {
				cached = ref.usage.PromptTokensDetails.CachedTokens
			}
			if want.usage.PromptTokens != ref.usage.PromptTokens || want.usage.CompletionTokens != ref.usage.CompletionTokens ||
				want.usage.PromptTokensDetails.CachedTokens != cached {
				t.Errorf("usage %+v, go-openai says %+v", want.usage, ref.usage)
			}
		}
	})
}

func unquoteOrEmpty(raw string) string {
	if raw == "" {
		return ""
	}
	return unquote([]byte(raw))
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
	ErrStreamBroken: true, ErrMalformedChunk: true, ErrCanceled: true,
}

func FuzzStream(f *testing.F) {
	f.Add([]byte(strings.Join(fullStream("s", 3), "")))
	f.Add([]byte(strings.Join(fullStream("s", 1)[:3], "")))
	f.Add([]byte(contentEvent("s", "a") + "data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n" + finishEvent("s", "stop") + doneEvent))
	f.Add([]byte(": keep-alive\n\n" + contentEvent("s", "a") + "data: {\"error\":{\"message\":\"x\"}}\n\n"))
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
		if rec.OK() && (rec.FinishReason == "" || !bytes.Contains(body, []byte(doneMarker))) {
			t.Fatalf("success without a finish reason or [DONE]: %+v", rec)
		}
		if rec.TokenSource == TokensFromChunks && rec.OutputTokens < len(rec.Chunks) {
			t.Fatalf("%d tokens counted from %d chunks", rec.OutputTokens, len(rec.Chunks))
		}
	})
}
