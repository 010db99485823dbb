package client

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// connCount counts a server's requests per connection.
type connCount struct{ n atomic.Int32 }

type connKey struct{}

// serveCounting starts h with a per-connection request counter in each
// request's context, and counts new connections.
func serveCounting(t *testing.T, h http.HandlerFunc) (srv *httptest.Server, newConns *atomic.Int32) {
	t.Helper()
	newConns = new(atomic.Int32)
	srv = httptest.NewUnstartedServer(h)
	srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, new(connCount))
	}
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			newConns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, newConns
}

func TestDoRetriesDeadKeptAliveConnection(t *testing.T) {
	t.Parallel()
	// The server reads the second request sent on a kept-alive connection,
	// then drops the connection without a byte: what a client sees when a
	// server (llama.cpp after its keep-alive timeout) closes an idle
	// connection just as a request goes out on it. The request must be sent
	// again on a new connection, succeed, and say so in Retries.
	var dropped atomic.Int32
	srv, newConns := serveCounting(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Context().Value(connKey{}).(*connCount).n.Add(1) == 2 {
			dropped.Add(1)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			_ = conn.Close()
			return
		}
		writeEvents(w, fullStream("s", 2)...)
	})
	c := newTestClient(t, srv.URL, nil)

	first := c.Do(t.Context(), request("r1"))
	wantClass(t, first, ErrNone)
	second := c.Do(t.Context(), request("r2"))

	wantClass(t, second, ErrNone)
	checkTimeline(t, second)
	if dropped.Load() != 1 {
		t.Fatalf("the server dropped %d requests, want 1: the second request did not reuse the connection", dropped.Load())
	}
	if second.Retries != 1 {
		t.Errorf("Retries = %d, want 1", second.Retries)
	}
	if second.Reused || second.Connected == 0 {
		t.Errorf("the resend must go out on a new connection: reused %v connected %v", second.Reused, second.Connected)
	}
	if n := newConns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
	if len(second.Chunks) != 2 || second.OutputTokens != 2 {
		t.Errorf("%d chunks, %d tokens, want 2 and 2", len(second.Chunks), second.OutputTokens)
	}
}

func TestDoNoRetryOnFreshConnection(t *testing.T) {
	t.Parallel()
	// A server that hangs up on a new connection is not a stale keep-alive:
	// resending would hammer a server that refuses the request.
	var seen atomic.Int32
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		conn, _, _ := w.(http.Hijacker).Hijack()
		_ = conn.Close()
	}))
	c := newTestClient(t, srv.URL, nil)

	rec := c.Do(t.Context(), request("r"))

	wantClass(t, rec, ErrConnect)
	if rec.Retries != 0 || seen.Load() != 1 {
		t.Errorf("Retries = %d, server saw %d requests; want 0 and 1", rec.Retries, seen.Load())
	}
}

func TestDoConcurrentStreamsUseOwnConnections(t *testing.T) {
	t.Parallel()
	const n = 8 // more than Go's default of 2 idle connections per host
	tests := []struct {
		name string
		warm bool
	}{
		{"cold", false},
		{"warmed", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Every handler waits until n requests are in flight at once, so
			// n streams must hold n connections.
			var mu sync.Mutex
			arrived, all := 0, make(chan struct{})
			round := func() {
				mu.Lock()
				defer mu.Unlock()
				arrived++
				if arrived%n == 0 {
					close(all)
					all = make(chan struct{})
				}
			}
			srv, newConns := serveCounting(t, func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				if r.Method == http.MethodGet { // Warm's request
					http.NotFound(w, r)
					return
				}
				mu.Lock()
				wait := all
				mu.Unlock()
				round()
				select {
				case <-wait:
				case <-time.After(10 * time.Second):
					t.Error("server: the requests never were all in flight together")
				}
				writeEvents(w, fullStream("s", 3)...)
			})
			c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.MaxConns = n })
			if tt.warm {
				if err := c.Warm(t.Context(), n); err != nil {
					t.Fatalf("Warm: %v", err)
				}
				if got := newConns.Load(); got != n {
					t.Fatalf("Warm opened %d connections, want %d", got, n)
				}
			}
			for r := range 2 {
				recs := make([]Record, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() { recs[i] = c.Do(t.Context(), request(fmt.Sprintf("r%d-%d", r, i))) })
				}
				wg.Wait()
				for i, rec := range recs {
					wantClass(t, rec, ErrNone)
					// Cold, the first round dials; every later request,
					// and every request after Warm, reuses a connection.
					if wantReused := tt.warm || r > 0; rec.Reused != wantReused {
						t.Errorf("round %d request %d: Reused = %v, want %v", r, i, rec.Reused, wantReused)
					}
				}
				if got := newConns.Load(); got != n {
					t.Errorf("after round %d: %d connections, want %d", r, got, n)
				}
			}
		})
	}
}

func TestDoReusesConnectionAfterSlowTail(t *testing.T) {
	t.Parallel()
	// The server ends its response a moment after [DONE]. The client must
	// read that tail: Go closes, instead of pooling, a connection whose body
	// was closed before its end.
	srv, newConns := serveCounting(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		writeEvents(w, fullStream("s", 2)...)
		time.Sleep(50 * time.Millisecond)
	})
	c := newTestClient(t, srv.URL, nil)

	first := c.Do(t.Context(), request("r1"))
	second := c.Do(t.Context(), request("r2"))

	wantClass(t, first, ErrNone)
	wantClass(t, second, ErrNone)
	if !second.Reused || newConns.Load() != 1 {
		t.Errorf("second request: Reused = %v, %d connections; want true and 1", second.Reused, newConns.Load())
	}
	// The record ends at [DONE], not after the tail.
	if tail := second.End - second.Chunks[len(second.Chunks)-1].At; tail >= 50*time.Millisecond {
		t.Errorf("End is %v after the last chunk: it waited for the tail", tail)
	}
}

func TestDoServerKeepsStreamOpenAfterDone(t *testing.T) {
	t.Parallel()
	// A server that never ends the response after [DONE]: the record is a
	// success ending at [DONE], and Do returns after the drain grace even
	// without a request timeout.
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeEvents(w, fullStream("s", 2)...)
		stall(r)
	}))
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Timeout = 0 })

	rec := c.Do(t.Context(), request("r"))

	wantClass(t, rec, ErrNone)
	checkTimeline(t, rec)
	if len(rec.Chunks) != 2 || rec.FinishReason != "length" {
		t.Errorf("%d chunks, finish %q; want 2, length", len(rec.Chunks), rec.FinishReason)
	}
}
