package client

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestDoFailures(t *testing.T) {
	t.Parallel()
	const id = "s"
	good := []string{roleEvent(id), contentEvent(id, "a"), contentEvent(id, "b")}
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		timeout    time.Duration
		class      ErrorClass
		chunks     int    // content chunks kept
		status     int    // HTTP status recorded
		errHas     string // a piece of Record.Error
		firstByte  bool   // a response byte arrived
		tokenSrc   TokenSource
		outputToks int
	}{
		{
			name: "closed mid-stream",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeEvents(w, good...)
				panic(http.ErrAbortHandler) // the server drops the connection
			},
			class: ErrStreamBroken, chunks: 2, status: 200, firstByte: true, tokenSrc: TokensFromChunks, outputToks: 2,
		},
		{
			name: "500",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "engine exploded", http.StatusInternalServerError)
			},
			class: ErrHTTPStatus, status: 500, errHas: "engine exploded", firstByte: true,
		},
		{
			name: "429 with an OpenAI error body",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = io.WriteString(w, `{"error":{"message":"Rate limit reached for requests","type":"rate_limit_error","code":"rate_limit_exceeded"}}`)
			},
			class: ErrHTTPStatus, status: 429, errHas: "Rate limit reached", firstByte: true,
		},
		{
			name: "stalls past the timeout after a chunk",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeEvents(w, good[:2]...)
				stall(r)
			},
			timeout: 300 * time.Millisecond,
			class:   ErrTimeout, chunks: 1, status: 200, firstByte: true, tokenSrc: TokensFromChunks, outputToks: 1,
		},
		{
			name: "stalls before answering",
			handler: func(w http.ResponseWriter, r *http.Request) {
				stall(r)
			},
			timeout: 300 * time.Millisecond,
			class:   ErrTimeout,
		},
		{
			name:    "malformed chunk",
			handler: streamOf(append(good, `data: {"id":"s","choices":[{"delta":{"content":"c"`+"\n\n", contentEvent(id, "d"), doneEvent)...),
			class:   ErrMalformedChunk, chunks: 2, status: 200, errHas: "chunk 2", firstByte: true, tokenSrc: TokensFromChunks, outputToks: 2,
		},
		{
			name:    "content that is not a string",
			handler: streamOf(roleEvent(id), `data: {"id":"s","choices":[{"delta":{"content":42}}]}`+"\n\n", doneEvent),
			class:   ErrMalformedChunk, status: 200, errHas: "not a string", firstByte: true, tokenSrc: TokensFromChunks,
		},
		{
			name:    "data that is not an object",
			handler: streamOf(contentEvent(id, "a"), "data: [1,2]\n\n", doneEvent),
			class:   ErrMalformedChunk, chunks: 1, status: 200, firstByte: true, tokenSrc: TokensFromChunks, outputToks: 1,
		},
		{
			name:    "closed cleanly before a finish_reason",
			handler: streamOf(good...),
			class:   ErrStreamBroken, chunks: 2, status: 200, errHas: "without [DONE] or a finish_reason", firstByte: true, tokenSrc: TokensFromChunks, outputToks: 2,
		},
		{
			name:    "cut mid-line before a finish_reason",
			handler: streamOf(append(good, `data: {"id":"s","choices":[{"delta":{"content":"c"},"finish_reason":"st`)...),
			class:   ErrStreamBroken, chunks: 2, status: 200, errHas: "without [DONE] or a finish_reason", firstByte: true, tokenSrc: TokensFromChunks, outputToks: 2,
		},
		{
			name:    "[DONE] without a finish_reason",
			handler: streamOf(append(good, usageEvent(id, 5, 2, 0), doneEvent)...),
			class:   ErrStreamBroken, chunks: 2, status: 200, errHas: "no finish_reason", firstByte: true, tokenSrc: TokensFromUsage, outputToks: 2,
		},
		{
			name:    "error event mid-stream",
			handler: streamOf(append(good, `data: {"error":{"message":"KV cache exhausted","type":"server_error"}}`+"\n\n", doneEvent)...),
			class:   ErrStreamBroken, chunks: 2, status: 200, errHas: "KV cache exhausted", firstByte: true, tokenSrc: TokensFromChunks, outputToks: 2,
		},
		{
			name:    "a body that is not SSE",
			handler: func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{"id":"x","choices":[]}`) },
			class:   ErrStreamBroken, status: 200, firstByte: true, tokenSrc: TokensFromChunks,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tt.handler)
			c := newTestClient(t, srv.URL, func(cfg *Config) {
				if tt.timeout != 0 {
					cfg.Timeout = tt.timeout
				}
			})

			rec := c.Do(t.Context(), request("r-"+tt.name))

			wantClass(t, rec, tt.class)
			checkTimeline(t, rec)
			if rec.ID != "r-"+tt.name || rec.Index != 7 || rec.Sent == 0 || rec.End == 0 {
				t.Errorf("record lost its identity or times: id %q index %d sent %v end %v", rec.ID, rec.Index, rec.Sent, rec.End)
			}
			if len(rec.Chunks) != tt.chunks {
				t.Errorf("%d chunks kept, want %d", len(rec.Chunks), tt.chunks)
			}
			if rec.Status != tt.status {
				t.Errorf("Status = %d, want %d", rec.Status, tt.status)
			}
			if !strings.Contains(rec.Error, tt.errHas) {
				t.Errorf("Error %q does not mention %q", rec.Error, tt.errHas)
			}
			if (rec.FirstByte != 0) != tt.firstByte {
				t.Errorf("FirstByte = %v, want a first byte: %v", rec.FirstByte, tt.firstByte)
			}
			if rec.TokenSource != tt.tokenSrc || rec.OutputTokens != tt.outputToks {
				t.Errorf("tokens: %d from %q, want %d from %q", rec.OutputTokens, rec.TokenSource, tt.outputToks, tt.tokenSrc)
			}
		})
	}
}

func TestDoConnectionRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now

	c := newTestClient(t, "http://"+addr, nil)
	rec := c.Do(t.Context(), request("r"))

	wantClass(t, rec, ErrConnect)
	checkTimeline(t, rec)
	if rec.Status != 0 || rec.FirstByte != 0 || rec.TokenSource != "" || rec.Retries != 0 {
		t.Errorf("status %d first byte %v token source %q retries %d, want none", rec.Status, rec.FirstByte, rec.TokenSource, rec.Retries)
	}
}

// signalOnContent is a RoundTripper that closes seen once the response body
// has handed out bytes holding generated content.
type signalOnContent struct {
	next http.RoundTripper
	seen chan struct{}
	once atomic.Bool
}

func (s *signalOnContent) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err == nil {
		resp.Body = &watchBody{ReadCloser: resp.Body, s: s}
	}
	return resp, err
}

type watchBody struct {
	io.ReadCloser
	s *signalOnContent
}

func (b *watchBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if strings.Contains(string(p[:n]), `"content":"a"`) && b.s.once.CompareAndSwap(false, true) {
		close(b.s.seen)
	}
	return n, err
}

func TestDoCanceled(t *testing.T) {
	t.Parallel()
	t.Run("mid-stream keeps what arrived", func(t *testing.T) {
		t.Parallel()
		srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeEvents(w, roleEvent("s"), contentEvent("s", "a"))
			stall(r)
		}))
		// Cancel once the client has read the content chunk's bytes: by
		// then the chunk sits in go-openai's buffer and is recorded before
		// the next read sees the cancellation.
		watch := &signalOnContent{next: http.DefaultTransport, seen: make(chan struct{})}
		hc := &http.Client{Transport: watch}
		t.Cleanup(hc.CloseIdleConnections)
		c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.HTTPClient = hc })
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-watch.seen
			cancel()
		}()

		rec := c.Do(ctx, request("r"))

		wantClass(t, rec, ErrCanceled)
		checkTimeline(t, rec)
		if len(rec.Chunks) != 1 || rec.Status != 200 || rec.ServerID != "s" {
			t.Errorf("kept %d chunks, status %d, server id %q; want 1, 200, s", len(rec.Chunks), rec.Status, rec.ServerID)
		}
	})
	t.Run("before sending", func(t *testing.T) {
		t.Parallel()
		srv := serve(t, streamOf(fullStream("s", 2)...))
		c := newTestClient(t, srv.URL, nil)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()

		rec := c.Do(ctx, request("r"))

		wantClass(t, rec, ErrCanceled)
		if rec.ID != "r" || rec.End == 0 {
			t.Errorf("record lost: id %q end %v", rec.ID, rec.End)
		}
	})
	t.Run("the caller's deadline is a cancellation, not a timeout", func(t *testing.T) {
		t.Parallel()
		srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { stall(r) }))
		c := newTestClient(t, srv.URL, nil) // Timeout 10 s: the caller's deadline comes first
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()

		rec := c.Do(ctx, request("r"))

		wantClass(t, rec, ErrCanceled)
	})
}
