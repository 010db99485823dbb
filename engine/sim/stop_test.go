package sim

import (
	"context"
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
