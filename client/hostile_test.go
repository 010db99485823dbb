package client

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/redact"
)

// endless writes body's head, then filler until the client goes away, the
// test stops it (stop closed) or 20 s pass. It reports on gone whether a
// write failed, which is the client closing the connection.
func endless(status int, head string, stop <-chan struct{}, gone chan<- bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if status == http.StatusOK {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		w.WriteHeader(status)
		fill := bytes.Repeat([]byte("a"), 64<<10)
		closed := false
		_, err := io.WriteString(w, head)
		for deadline := time.Now().Add(20 * time.Second); err == nil && time.Now().Before(deadline); {
			select {
			case <-stop:
				gone <- false
				return
			default:
			}
			_, err = w.Write(fill)
			closed = err != nil
		}
		gone <- closed
	}
}

// A server that sends an SSE line with no end costs the client at most
// MaxSSELine of memory: the request fails as malformed_chunk, saying so, and
// the connection is closed. Not parallel: it measures the heap.
func TestSSELineTooLong(t *testing.T) {
	stop, gone := make(chan struct{}), make(chan bool, 1)
	srv := serve(t, endless(http.StatusOK, "data: {\"x\":\"", stop, gone))
	defer close(stop)
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Timeout = 15 * time.Second })

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rec := c.Do(t.Context(), request("r"))
	runtime.ReadMemStats(&after)

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
}

// An error body (or a non-streamed one) is read only up to a stated limit.
func TestErrorBodyBounded(t *testing.T) {
	t.Parallel()
	for _, completions := range []bool{false, true} {
		t.Run(fmt.Sprint("completions=", completions), func(t *testing.T) {
			t.Parallel()
			stop, gone := make(chan struct{}), make(chan bool, 1)
			srv := serve(t, endless(http.StatusUnauthorized, "no entry ", stop, gone))
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
		stop, gone := make(chan struct{}), make(chan bool, 1)
		srv := serve(t, endless(http.StatusOK, `{"id":"`, stop, gone))
		defer close(stop)
		c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.NoStream = true; cfg.Timeout = 30 * time.Second })
		rec := c.Do(t.Context(), request("r"))
		wantClass(t, rec, ErrMalformedChunk)
		if want := fmt.Sprintf("response longer than %d bytes", maxBodyBytes); rec.Error != want {
			t.Errorf("Error %q, want %q", rec.Error, want)
		}
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
