package client

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/internal/race"
)

// The per-chunk path must not allocate (decision 0204, 0207): at a thousand
// streams an allocation per chunk is tens of thousands per second, and with
// the collector kept out of runs (0004) every one of them stays in memory.
// These tests count allocations, not time, so they hold on a loaded machine.
// Not under the race detector: there a 1024-chunk request counts one or two
// allocations more than a 16-chunk one, every time (3 runs of 3 here, also
// with checkptr off), where the build users run counts none more. -race
// builds the code and the runtime differently (instrumented accesses;
// sync.Pool drops a quarter of what it is given, on purpose), so its
// allocation count does not describe the product; the normal build's does.

// allocsPerDo is the allocations of one Do over an in-memory body (no socket,
// no transport goroutine: every allocation counted is the client's).
func allocsPerDo(t *testing.T, body []byte, maxTokens int) float64 {
	t.Helper()
	c := newTestClient(t, "http://engine.test", func(cfg *Config) {
		cfg.HTTPClient = &http.Client{Transport: bodyTransport(body)}
	})
	r := request("alloc")
	r.MaxTokens = maxTokens
	var rec Record
	n := testing.AllocsPerRun(20, func() { rec = c.Do(t.Context(), r) })
	if !rec.OK() {
		t.Fatalf("%s: %s", rec.ErrorClass, rec.Error)
	}
	return n
}

func TestPerChunkPathAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts under -race do not describe the product (see above); the normal build checks them")
	}
	long := strings.Repeat("x", 3*sseBufSize) // a line longer than the SSE buffer
	streams := []struct {
		name  string
		event func(i int) string
	}{
		{"content chunks", func(i int) string { return contentEvent("chatcmpl-1", fmt.Sprintf("tok%d ", i)) }},
		// A line longer than the buffer is assembled in a slice the
		// stream keeps: one allocation for the first, none after.
		{"chunks longer than the SSE buffer", func(int) string { return contentEvent("chatcmpl-1", long) }},
		{"chunks after SSE comments", func(i int) string { return ": ping\n\n" + contentEvent("chatcmpl-1", "t") }},
		// Other framings the spec allows (decision 0209): CRLF line ends,
		// and a payload over several data lines, copied into a slice the
		// reader keeps.
		{"CRLF line ends", func(i int) string {
			return strings.ReplaceAll(contentEvent("chatcmpl-1", fmt.Sprintf("tok%d ", i)), "\n", "\r\n")
		}},
		{"JSON over several data lines", func(i int) string {
			return strings.ReplaceAll(contentEvent("chatcmpl-1", fmt.Sprintf("tok%d ", i)), `,"`, ",\ndata: \"")
		}},
	}
	for _, s := range streams {
		t.Run(s.name, func(t *testing.T) {
			body := func(n int) []byte {
				var b strings.Builder
				b.WriteString(roleEvent("chatcmpl-1"))
				for i := range n {
					b.WriteString(s.event(i))
				}
				b.WriteString(finishEvent("chatcmpl-1", "length") + usageEvent("chatcmpl-1", 11, n, 0) + doneEvent)
				return []byte(b.String())
			}
			// Same max_tokens for both: the chunk slice is allocated once,
			// at the same size, before the first chunk.
			short, long := allocsPerDo(t, body(16), 1024), allocsPerDo(t, body(1024), 1024)
			if long > short {
				t.Errorf("a request of 1024 chunks allocates %.0f times, one of 16 chunks %.0f: %.3f allocations per chunk, want 0",
					long, short, (long-short)/(1024-16))
			}
		})
	}
}
