package client

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"
)

var traceparentRE = regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-01$`)

// TestTraceparentSent checks that every request carries a W3C traceparent
// whose trace id the record keeps, derived from the run's start and the
// request id: the same pair gives the same ids, another request or another
// run a different one; and that a traceparent in Config.Headers replaces
// it, the record then keeping that header's trace id.
func TestTraceparentSent(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{} // X-Request-Id → traceparent
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("X-Request-Id")] = r.Header.Get("traceparent")
		mu.Unlock()
		writeEvents(w, `data: {"id":"x","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}`+"\n\n", "data: [DONE]\n\n")
	}))
	defer srv.Close()
	start := time.Unix(1_800_000_000, 123)
	c := newTestClient(t, srv.URL, func(c *Config) { c.Start = start })
	a, b := c.Do(t.Context(), request("a")), c.Do(t.Context(), request("b"))
	for _, rec := range []Record{a, b} {
		tp := seen[rec.ID]
		if !rec.OK() || !traceparentRE.MatchString(tp) || tp[3:35] != rec.TraceID {
			t.Fatalf("request %s: traceparent %q, record trace id %q (%s %s)", rec.ID, tp, rec.TraceID, rec.ErrorClass, rec.Error)
		}
	}
	if a.TraceID == b.TraceID || seen["a"][36:52] == seen["b"][36:52] {
		t.Errorf("two requests share ids: %q %q", seen["a"], seen["b"])
	}
	tid, sid := TraceIDs(start.UnixNano(), "a")
	if got := Traceparent(tid, sid); got != seen["a"] {
		t.Errorf("TraceIDs(start, a) gives %q, the client sent %q", got, seen["a"])
	}
	if other, _ := TraceIDs(start.UnixNano()+1, "a"); other == tid {
		t.Error("another run derives the same trace id for the same request id")
	}
	// The record line keeps it.
	line, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back Record
	if err := json.Unmarshal(line, &back); err != nil || back.TraceID != a.TraceID {
		t.Errorf("record round trip: trace id %q, want %q (%v)", back.TraceID, a.TraceID, err)
	}

	const mine = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	c = newTestClient(t, srv.URL, func(c *Config) { c.Headers = map[string]string{"TraceParent": mine} })
	rec := c.Do(t.Context(), request("c"))
	if seen["c"] != mine || rec.TraceID != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("Headers' traceparent: sent %q, record trace id %q", seen["c"], rec.TraceID)
	}
}

func TestTraceIDOf(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "0af7651916cd43dd8448eb211c80319c"},
		{"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", ""}, // W3C: lowercase only
		{"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331", ""},
		{"garbage", ""},
		{"", ""},
	} {
		if got := traceIDOf(tc.in); got != tc.want {
			t.Errorf("traceIDOf(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
