package sim

import (
	"context"
	"net"
	"net/url"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestGracefulStop: Stop lets in-flight streams finish when it has the time,
// and cuts them when its context ends first.
func TestGracefulStop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		grace    time.Duration
		wantDone bool
	}{
		{"in-flight streams finish", 30 * time.Second, true},
		{"grace over, streams cut", 50 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, _ := Preset("tiny")
			p.DecodeBase = 5 * time.Millisecond
			e, err := New(Config{Params: p})
			if err != nil {
				t.Fatal(err)
			}
			ep, err := e.Start(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan rawStream, 1)
			go func() { got <- readRaw(t, ep.BaseURL, "long", map[string]any{"max_tokens": 100}) }()
			for len(e.Steps()) < 5 { // the stream is under way
				time.Sleep(5 * time.Millisecond)
			}
			ctx, cancel := context.WithTimeout(context.Background(), tc.grace)
			defer cancel()
			if err := e.Stop(ctx); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			rs := <-got
			if rs.done != tc.wantDone {
				t.Errorf("stream done = %v (%d tokens, err %v), want %v", rs.done, countContent(rs), rs.readErr, tc.wantDone)
			}
			if tc.wantDone && countContent(rs) != 100 {
				t.Errorf("%d tokens, want all 100", countContent(rs))
			}
			if _, err := e.Start(t.Context()); err == nil {
				t.Error("Start after Stop succeeded")
			}
		})
	}
}

// TestStopLeavesNoGoroutines runs before the parallel tests (it is not
// parallel), so every goroutine it starts must be gone after Stop.
func TestStopLeavesNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	e, ep := startEngineNoCleanup(t, Config{})
	client := newClient()
	res := postStream(t, client, ep.BaseURL+"/chat/completions", clockSince(), nil, chatBody(map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "x y"}}, "stream": true, "max_tokens": 3,
	}))
	if !res.done {
		t.Fatal("stream failed")
	}
	client.CloseIdleConnections()
	if err := e.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	// A second Stop is harmless.
	if err := e.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestStopClosesSilentConnections: a connection accepted but never sent a
// request (a client's spare pooled connection) does not hold Stop back.
// net/http's Shutdown counts such a connection as busy until it is 5 s old;
// with nothing being served there is nothing left to finish gracefully.
func TestStopClosesSilentConnections(t *testing.T) {
	t.Parallel()
	e, ep := startEngineNoCleanup(t, Config{})
	u, err := url.Parse(ep.BaseURL)
	if err != nil {
		t.Fatal(err)
	}
	// One request served first, so the engine is past its start; then a
	// connection that says nothing, accepted just before Stop.
	if rs := readRaw(t, ep.BaseURL, "warm", map[string]any{"max_tokens": 3}); !rs.done {
		t.Fatalf("warm-up stream not done: %v", rs.readErr)
	}
	silent, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	time.Sleep(50 * time.Millisecond) // accepted: StateNew on the server

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	began := time.Now()
	if err := e.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	// The bound is what net/http would have waited (5 s) less a margin for a
	// slow machine: the fix returns within milliseconds.
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("Stop took %v with a silent connection open, want it closed at once", took)
	}
	_ = silent.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := silent.Read(make([]byte, 1)); err == nil {
		t.Error("the silent connection is still open after Stop")
	}
}
