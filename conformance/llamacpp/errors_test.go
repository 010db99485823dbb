package llamacpp

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim"
)

// errorEvent is the stream's error event, if it ended with one.
func errorEvent(s sse) map[string]any {
	if len(s.events) == 0 {
		return nil
	}
	e, _ := s.events[len(s.events)-1]["error"].(map[string]any)
	return e
}

// checkErrorEvent holds a stream ended by the server's error to llama.cpp's
// shape: status 200, content chunks, then data: {"error": {"code": 500,
// "message", "type": "server_error"}} and no [DONE].
func checkErrorEvent(t *testing.T, name string, s sse) {
	t.Helper()
	e := errorEvent(s)
	if code, _ := num(e, "code"); code != 500 || e["type"] != "server_error" || e["message"] == "" || len(e) != 3 {
		t.Errorf("%s: error event %v, want code 500, a message and type server_error", name, e)
	}
	if s.done {
		t.Errorf("%s: [DONE] after the error event", name)
	}
	if len(s.events) < 2 || choice0(s.events[len(s.events)-2]) == nil {
		t.Errorf("%s: no content chunk before the error event", name)
	}
}

// TestParserErrorEndsStream: with random weights the model writes invalid
// UTF-8 from byte tokens, and llama-server's chat parser ends the stream with
// an error event (status 200, no [DONE]) while the slot goes on generating to
// max_tokens: tokens_predicted_total moves by max_tokens, more than the
// client saw. Banning the byte tokens with logit_bias prevents it. The
// built-in engine's stream_error fault writes the same event.
func TestParserErrorEndsStream(t *testing.T) {
	both(t)
	const maxTokens = 200
	var failed *sse
	for i := 0; i < 30 && failed == nil; i++ {
		before := families(t, real)["llamacpp:tokens_predicted_total"].value
		body := map[string]any{"model": real.model, "max_tokens": maxTokens,
			"messages": []map[string]any{{"role": "user", "content": words(20)}}}
		s := stream(t, real, "/v1/chat/completions", body)
		if errorEvent(s) == nil {
			continue
		}
		failed = &s
		checkErrorEvent(t, real.name, s)
		if msg, _ := errorEvent(s)["message"].(string); !strings.HasPrefix(msg, "Failed to parse input at pos ") {
			t.Errorf("%s: error message %q", real.name, msg)
		}
		// The slot generates on after the stream ended.
		deadline := time.Now().Add(30 * time.Second)
		moved := 0.0
		for time.Now().Before(deadline) {
			if moved = families(t, real)["llamacpp:tokens_predicted_total"].value - before; moved >= maxTokens {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if moved != maxTokens {
			t.Errorf("%s: tokens_predicted_total moved by %v for the broken stream, want max_tokens %d", real.name, moved, maxTokens)
		}
		t.Logf("%s: request %d ended with %v after %d chunks", real.name, i+1, errorEvent(s), len(s.events)-1)
	}
	if failed == nil {
		// The build of decision 2200 holds back an incomplete UTF-8
		// sequence instead; the May 2026 build failed 27 of 60 such streams.
		t.Logf("%s: no stream of 30 met the parser error", real.name)
	}
	for i := range 10 {
		s := stream(t, real, "/v1/chat/completions", chat(real, words(20), maxTokens))
		if e := errorEvent(s); e != nil || !s.done {
			t.Errorf("%s: with the byte tokens banned, stream %d ended with %v (done %v)", real.name, i+1, e, s.done)
		}
	}

	cfg, err := emulatedConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Faults.StreamErrorRate = 1
	cfg.Faults.AfterTokens = 3
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := e.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(e.Stop) })
	tg := target{name: "built-in llamacpp dialect with stream_error_rate 1", root: rootOf(ep.BaseURL), model: "tiny"}
	resp := post(t, tg, "/v1/chat/completions", map[string]any{"model": "tiny", "max_tokens": 20, "stream": true,
		"messages": []map[string]any{{"role": "user", "content": words(20)}}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d", tg.name, resp.StatusCode)
	}
	checkErrorEvent(t, tg.name, readSSE(t, tg, resp))
}
