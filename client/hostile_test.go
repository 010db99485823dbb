package client

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/redact"
)

// endless writes body's head, then filler until the client goes away or the
// test stops it (stop closed), counting what it wrote in written (if not
// nil). It reports on gone whether a write failed, which is the client
// closing the connection. It has no deadline of its own: a body that ended
// after 20 s, as it did, was short of the client's 64-MiB limit on a busy
// machine (46 MB beside two CPU hogs under -race), and the client then read
// a whole, truncated body; what bounds a hang is the client's timeout.
func endless(status int, head string, stop <-chan struct{}, gone chan<- bool, written *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if status == http.StatusOK {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		w.WriteHeader(status)
		fill := bytes.Repeat([]byte("a"), 64<<10)
		n, err := io.WriteString(w, head)
		for err == nil {
			if written != nil {
				written.Add(int64(n))
			}
			select {
			case <-stop:
				gone <- false
				return
			default:
			}
			n, err = w.Write(fill)
		}
		gone <- true
	}
}

// shortOfLimit is the miss of a request that timed out before the server
// had written limit bytes: the client's timeout came before what the test
// is about (a limit) could be reached, which is the machine's speed, not
// the client's. Beside two CPU hogs under -race the client read less than
// 16 MiB in 15 s.
func shortOfLimit(rec Record, written int64, limit int) []string {
	if rec.ErrorClass == ErrTimeout && written < int64(limit) {
		return []string{fmt.Sprintf("the request timed out (%s) with %d MiB written, short of the %d-MiB limit under test", rec.Error, written>>20, limit>>20)}
	}
	return nil
}

// A server that sends an SSE line with no end costs the client at most
// MaxSSELine of memory: the request fails as malformed_chunk, saying so, and
// the connection is closed. Not parallel: it measures the heap.
func TestSSELineTooLong(t *testing.T) {
	quiet.Retry{Within: time.Minute, QuietMisses: 2}.Run(t, func(int) []string {
		stop, gone := make(chan struct{}), make(chan bool, 1)
		var written atomic.Int64
		srv := serve(t, endless(http.StatusOK, "data: {\"x\":\"", stop, gone, &written))
		defer close(stop)
		c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Timeout = 15 * time.Second })

		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rec := c.Do(t.Context(), request("r"))
		runtime.ReadMemStats(&after)
		if miss := shortOfLimit(rec, written.Load(), MaxSSELine); miss != nil {
			return miss
		}

		wantClass(t, rec, ErrMalformedChunk)
		if want := "SSE line longer than 16 MiB"; !strings.Contains(rec.Error, want) {
			t.Errorf("Error %q does not say %q", rec.Error, want)
		}
		// The line is assembled by doubling up to the cap: about 2× the cap is
		// allocated in all. Without one the client allocates until it times out.
		allocated := after.TotalAlloc - before.TotalAlloc
		if ratio := float64(allocated) / MaxSSELine; ratio > 6 {
			t.Errorf("reading the endless line allocated %d MiB, %.1f× MaxSSELine (want at most 6×)", allocated>>20, ratio)
		}
		select {
		case closed := <-gone:
			if !closed {
				t.Error("the server's writes never failed: the connection stayed open")
			}
		case <-time.After(10 * time.Second):
			t.Error("the server still writes 10 s after the request ended: the connection was not closed")
		}
		return nil
	})
}

// An error body (or a non-streamed one) is read only up to a stated limit.
func TestErrorBodyBounded(t *testing.T) {
	t.Parallel()
	for _, completions := range []bool{false, true} {
		t.Run(fmt.Sprint("completions=", completions), func(t *testing.T) {
			t.Parallel()
			stop, gone := make(chan struct{}), make(chan bool, 1)
			srv := serve(t, endless(http.StatusUnauthorized, "no entry ", stop, gone, nil))
			defer close(stop)
			c := newTestClient(t, srv.URL, func(cfg *Config) {
				cfg.Timeout = 15 * time.Second
				if completions {
					cfg.Endpoint = EndpointCompletions
				}
			})
			start := time.Now()
			rec := c.Do(t.Context(), request("r"))
			wantClass(t, rec, ErrHTTPStatus)
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the 401's endless body was read for %v", d)
			}
			if !strings.Contains(rec.Error, "status 401") || !strings.Contains(rec.Error, "no entry") || len(rec.Error) > 1000 {
				t.Errorf("Error (%d bytes) %.300q: want the status and the body's start, shortened", len(rec.Error), rec.Error)
			}
		})
	}
	t.Run("not streamed", func(t *testing.T) {
		t.Parallel()
		quiet.Retry{Within: time.Minute, QuietMisses: 2}.Run(t, func(int) []string {
			stop, gone := make(chan struct{}), make(chan bool, 1)
			var written atomic.Int64
			srv := serve(t, endless(http.StatusOK, `{"id":"`, stop, gone, &written))
			defer close(stop)
			c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.NoStream = true; cfg.Timeout = 30 * time.Second })
			rec := c.Do(t.Context(), request("r"))
			if miss := shortOfLimit(rec, written.Load(), maxBodyBytes); miss != nil {
				return miss
			}
			wantClass(t, rec, ErrMalformedChunk)
			if want := fmt.Sprintf("response longer than %d bytes", maxBodyBytes); rec.Error != want {
				t.Errorf("Error %q, want %q", rec.Error, want)
			}
			return nil
		})
	})
}

// A server that echoes the credential in its error (as some proxies do on a
// 401) does not get it into the Record, on any path that writes Error.
func TestRecordErrorRedacted(t *testing.T) {
	t.Parallel()
	const key = "sk-live-0123456789abcdef"
	echo := func(w http.ResponseWriter, r *http.Request) string {
		_, _ = io.Copy(io.Discard, r.Body)
		return "invalid credential: " + r.Header.Get("Authorization") + " (key " + key + ")"
	}
	handlers := map[string]http.HandlerFunc{
		"401": func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, echo(w, r), http.StatusUnauthorized)
		},
		"401 JSON": func(w http.ResponseWriter, r *http.Request) {
			msg := echo(w, r)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = fmt.Fprintf(w, `{"error":{"message":%q,"type":"auth"}}`, msg)
		},
		"error event": func(w http.ResponseWriter, r *http.Request) {
			writeEvents(w, fmt.Sprintf(`data: {"error":{"message":%q}}`+"\n\n", echo(w, r)))
		},
		"malformed chunk": func(w http.ResponseWriter, r *http.Request) {
			writeEvents(w, "data: "+echo(w, r)+"\n\n")
		},
	}
	for name, h := range handlers {
		for _, completions := range []bool{false, true} {
			t.Run(fmt.Sprint(name, " completions=", completions), func(t *testing.T) {
				t.Parallel()
				srv := serve(t, h)
				c := newTestClient(t, srv.URL, func(cfg *Config) {
					cfg.APIKey = key
					if completions {
						cfg.Endpoint = EndpointCompletions
					}
				})
				rec := c.Do(t.Context(), request("r"))
				if rec.ErrorClass == ErrNone || !strings.Contains(rec.Error, "invalid credential") {
					t.Fatalf("class %q error %q: want the server's message", rec.ErrorClass, rec.Error)
				}
				if strings.Contains(rec.Error, "0123456789abcdef") || !strings.Contains(rec.Error, redact.Marker) {
					t.Errorf("Error leaks the key: %q", rec.Error)
				}
			})
		}
	}
}
