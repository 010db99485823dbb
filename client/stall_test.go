package client

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// watched runs WatchStalls for c until the test ends.
func watched(t *testing.T, c *Client, stall time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { c.WatchStalls(ctx, stall) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// TestStalled: a request from which nothing arrives for the stall time ends
// as stalled (not timeout), keeps what it received, and says after what.
func TestStalled(t *testing.T) {
	const stallFor = 200 * time.Millisecond
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		chunks  int
		says    string
	}{
		{"no headers", func(w http.ResponseWriter, r *http.Request) { stall(r) }, 0, "no response headers"},
		{"headers, no chunk", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			writeEvents(w, roleEvent("a"))
			stall(r)
		}, 0, "status 200 and no output chunk"},
		{"three chunks, then silence", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			writeEvents(w, roleEvent("a"), contentEvent("a", "x"), contentEvent("a", "y"), contentEvent("a", "z"))
			stall(r)
		}, 3, "3 output chunks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, tc.handler)
			c := newTestClient(t, srv.URL, nil) // timeout 10 s: the stall comes first
			watched(t, c, stallFor)
			rec := c.Do(context.Background(), request("a"))
			wantClass(t, rec, ErrStalled)
			if len(rec.Chunks) != tc.chunks {
				t.Errorf("%d chunks kept, want %d", len(rec.Chunks), tc.chunks)
			}
			if !strings.Contains(rec.Error, tc.says) || !strings.Contains(rec.Error, "stall_timeout 200ms") {
				t.Errorf("error %q: want the silence named, after %q", rec.Error, tc.says)
			}
			last := rec.Sent // silence counts from the hand-over to the transport
			if rec.FirstByte > 0 {
				last = rec.FirstByte
			}
			if n := len(rec.Chunks); n > 0 {
				last = rec.Chunks[n-1].At
			}
			if silent := rec.End - last; silent < stallFor {
				t.Errorf("ended %v after its last byte, before the stall time %v", silent, stallFor)
			}
		})
	}
}

// TestNotStalledWhileBytesFlow: a stream slower than the stall time as a
// whole but never silent that long is not stalled; nor is a request when no
// watchdog runs.
func TestNotStalledWhileBytesFlow(t *testing.T) {
	const stallFor = 300 * time.Millisecond
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, e := range fullStream("a", 12) {
			_, _ = io.WriteString(w, e)
			w.(http.Flusher).Flush()
			time.Sleep(stallFor / 6)
		}
	}))
	c := newTestClient(t, srv.URL, nil)
	watched(t, c, stallFor)
	if rec := c.Do(context.Background(), request("a")); !rec.OK() {
		t.Errorf("a stream with a byte every %v failed: %q %q", stallFor/6, rec.ErrorClass, rec.Error)
	}
}

// TestSilent: Silent counts the requests in flight that have received no
// byte, and only those.
func TestSilent(t *testing.T) {
	release := make(chan struct{})
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Header.Get("X-Request-Id") == "talks" {
			writeEvents(w, roleEvent("talks"))
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	c := newTestClient(t, srv.URL, nil)
	var wg sync.WaitGroup
	for _, id := range []string{"quiet1", "quiet2", "talks"} {
		wg.Go(func() { c.Do(context.Background(), request(id)) })
	}
	// Wait (bounded) for the three to be in flight and the talker heard.
	var n int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		c.inflight.mu.Lock()
		all := len(c.inflight.calls)
		c.inflight.mu.Unlock()
		if n, _ = c.Silent(); all == 3 && n == 2 {
			break
		}
	}
	n, longest := c.Silent()
	close(release)
	wg.Wait()
	if n != 2 || longest <= 0 {
		t.Errorf("Silent() = %d, %v: want the two requests that heard nothing", n, longest)
	}
	if n, _ := c.Silent(); n != 0 {
		t.Errorf("Silent() = %d after every request ended", n)
	}
}

func TestStallTick(t *testing.T) {
	for _, tc := range []struct{ stall, want time.Duration }{
		{time.Millisecond, 5 * time.Millisecond}, {80 * time.Millisecond, 10 * time.Millisecond},
		{time.Second, 125 * time.Millisecond}, {5 * time.Minute, 250 * time.Millisecond},
	} {
		if got := StallTick(tc.stall); got != tc.want {
			t.Errorf("StallTick(%v) = %v, want %v", tc.stall, got, tc.want)
		}
	}
}
