package client

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// This file holds the SSE servers the tests talk to: real httptest servers
// on loopback that stream the way SGLang and vLLM do.

const doneEvent = "data: [DONE]\n\n"

// roleEvent is the first chunk engines send: the role, no content.
func roleEvent(id string) string {
	return fmt.Sprintf(`data: {"id":%q,"object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n", id)
}

// contentEvent is a chunk carrying generated text.
func contentEvent(id, text string) string {
	return fmt.Sprintf(`data: {"id":%q,"object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}],"usage":null}`+"\n\n", id, text)
}

// finishEvent is the chunk that closes the choice.
func finishEvent(id, reason string) string {
	return fmt.Sprintf(`data: {"id":%q,"object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":%q}]}`+"\n\n", id, reason)
}

// usageEvent is the include_usage chunk: no choices, the usage.
func usageEvent(id string, prompt, completion, cached int) string {
	return fmt.Sprintf(`data: {"id":%q,"object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d}}}`+"\n\n",
		id, prompt, completion, prompt+completion, cached)
}

// fullStream is a whole successful stream of n content chunks.
func fullStream(id string, n int) []string {
	ev := []string{roleEvent(id)}
	for i := range n {
		ev = append(ev, contentEvent(id, fmt.Sprintf("tok%d ", i)))
	}
	return append(ev, finishEvent(id, "length"), usageEvent(id, 11, n, 3), doneEvent)
}

// writeEvents sends the SSE headers and each event with a flush after it.
func writeEvents(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, e := range events {
		_, _ = io.WriteString(w, e)
		w.(http.Flusher).Flush()
	}
}

// stall holds a handler until the client goes away. The body is read first:
// Go's server notices a client hanging up (and cancels r.Context) only once
// the request body is consumed. The guard keeps a broken test from hanging.
func stall(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(20 * time.Second):
	}
}

// streamOf answers every request with events.
func streamOf(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		writeEvents(w, events...)
	}
}

// sentRequest is what a server received.
type sentRequest struct {
	header http.Header
	body   map[string]any
}

// recording wraps h and hands each request it receives to the returned channel.
func recording(t *testing.T, h http.HandlerFunc) (http.HandlerFunc, <-chan sentRequest) {
	t.Helper()
	got := make(chan sentRequest, 16)
	return func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("server: request body: %v", err)
		}
		got <- sentRequest{header: r.Header.Clone(), body: body}
		h(w, r)
	}, got
}

// serve starts h on loopback for the test's lifetime.
func serve(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// newTestClient builds a Client for srv with the test defaults, changed by edit.
func newTestClient(t *testing.T, baseURL string, edit func(*Config)) *Client {
	t.Helper()
	cfg := Config{
		BaseURL:      baseURL + "/v1",
		Model:        "test-model",
		Dialect:      "sglang",
		Start:        time.Now(),
		Timeout:      10 * time.Second,
		MaxConns:     4,
		IncludeUsage: true,
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// request is a typical planned request.
func request(id string) Request {
	return Request{
		ID:        id,
		Index:     7,
		Phase:     "main",
		Intended:  time.Nanosecond,
		Messages:  []Message{{Role: "user", Content: "hello"}},
		MaxTokens: 16,
		MinTokens: 16,
		IgnoreEOS: true,
	}
}

// checkTimeline asserts the order every record must keep, whatever its outcome.
func checkTimeline(t *testing.T, rec Record) {
	t.Helper()
	if rec.Sent != 0 && rec.End < rec.Sent {
		t.Errorf("End %v before Sent %v", rec.End, rec.Sent)
	}
	if rec.FirstByte != 0 && (rec.FirstByte < rec.Sent || rec.FirstByte > rec.End) {
		t.Errorf("FirstByte %v outside [Sent %v, End %v]", rec.FirstByte, rec.Sent, rec.End)
	}
	if rec.FirstToken != 0 && (rec.FirstToken < rec.FirstByte || rec.FirstToken > rec.End) {
		t.Errorf("FirstToken %v outside [FirstByte %v, End %v]", rec.FirstToken, rec.FirstByte, rec.End)
	}
	prev := rec.FirstToken
	for i, ch := range rec.Chunks {
		if ch.At < prev || ch.At > rec.End {
			t.Errorf("chunk %d at %v: out of order (previous %v, end %v)", i, ch.At, prev, rec.End)
		}
		prev = ch.At
	}
	if len(rec.Chunks) > 0 && rec.Chunks[0].At != rec.FirstToken {
		t.Errorf("FirstToken %v is not the first chunk's time %v", rec.FirstToken, rec.Chunks[0].At)
	}
	if rec.Connected != 0 && (rec.Connected < rec.Sent || (rec.FirstByte != 0 && rec.Connected > rec.FirstByte)) {
		t.Errorf("Connected %v outside [Sent %v, FirstByte %v]", rec.Connected, rec.Sent, rec.FirstByte)
	}
	if rec.Reused && rec.Connected != 0 {
		t.Errorf("a reused connection has Connected %v", rec.Connected)
	}
}

// wantClass asserts the record's error class, printing the record when it is wrong.
func wantClass(t *testing.T, rec Record, want ErrorClass) {
	t.Helper()
	if rec.ErrorClass != want {
		t.Fatalf("ErrorClass = %q, want %q (error %q, status %d, %d chunks)", rec.ErrorClass, want, rec.Error, rec.Status, len(rec.Chunks))
	}
	if want != ErrNone && rec.Error == "" {
		t.Errorf("class %q without an error message", want)
	}
	if want == ErrNone && rec.Error != "" {
		t.Errorf("success with error %q", rec.Error)
	}
}
