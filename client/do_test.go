package client

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDoNormalStream(t *testing.T) {
	t.Parallel()
	h, got := recording(t, streamOf(fullStream("srv-1", 5)...))
	srv := serve(t, h)
	c := newTestClient(t, srv.URL, nil)

	rec := c.Do(t.Context(), request("req-1"))

	wantClass(t, rec, ErrNone)
	checkTimeline(t, rec)
	if rec.Sent <= rec.Intended || rec.FirstByte == 0 || rec.FirstToken == 0 || rec.End <= rec.FirstToken {
		t.Errorf("timeline not filled: intended %v sent %v first byte %v first token %v end %v",
			rec.Intended, rec.Sent, rec.FirstByte, rec.FirstToken, rec.End)
	}
	// A first request dials: the request goes on the wire after the
	// connection is up, and latencies count from there.
	if rec.Wrote < rec.Connected || rec.Connected < rec.Sent || rec.Wrote > rec.FirstByte {
		t.Errorf("send order: sent %v connected %v wrote %v first byte %v", rec.Sent, rec.Connected, rec.Wrote, rec.FirstByte)
	}
	if ttft, _ := rec.TTFT(); ttft != rec.FirstToken-rec.Wrote || rec.SendDelay() != rec.Wrote-rec.Sent {
		t.Errorf("TTFT %v and send delay %v must split at the wire write %v", ttft, rec.SendDelay(), rec.Wrote)
	}
	if rec.Reused || rec.Connected == 0 || rec.ConnectDur < 0 {
		t.Errorf("a first request must dial: reused %v connected %v connect dur %v", rec.Reused, rec.Connected, rec.ConnectDur)
	}
	type summary struct {
		ID, ServerID, Phase, FinishReason string
		Index, Status, Retries, Chunks    int
		Prompt, Output, Cached            int
		Source                            TokenSource
	}
	want := summary{
		ID: "req-1", ServerID: "srv-1", Phase: "main", FinishReason: "length",
		Index: 7, Status: 200, Chunks: 5, Prompt: 11, Output: 5, Cached: 3, Source: TokensFromUsage,
	}
	gotSum := summary{
		ID: rec.ID, ServerID: rec.ServerID, Phase: rec.Phase, FinishReason: rec.FinishReason,
		Index: rec.Index, Status: rec.Status, Retries: rec.Retries, Chunks: len(rec.Chunks),
		Prompt: rec.PromptTokens, Output: rec.OutputTokens, Cached: rec.CachedTokens, Source: rec.TokenSource,
	}
	if d := cmp.Diff(want, gotSum); d != "" {
		t.Errorf("record (-want +got):\n%s", d)
	}
	for i, ch := range rec.Chunks {
		if ch.Tokens != 1 {
			t.Errorf("chunk %d: %d tokens, want 1", i, ch.Tokens)
		}
	}

	sent := <-got
	if id := sent.header.Get("X-Request-Id"); id != "req-1" {
		t.Errorf("X-Request-Id = %q, want req-1", id)
	}
	wantBody := map[string]any{
		"model":          "test-model",
		"messages":       []any{map[string]any{"role": "user", "content": "hello"}},
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"max_tokens":     16.0,
		"min_tokens":     16.0,
		"ignore_eos":     true,
		"rid":            "req-1",
	}
	if d := cmp.Diff(wantBody, sent.body); d != "" {
		t.Errorf("request body (-want +got):\n%s", d)
	}
}

func TestDoDialectIDField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		dialect string
		field   string // "" when no body field carries the id
	}{
		{"sglang", "rid"},
		{"vllm", "request_id"},
		{"fastdeploy", "request_id"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run("dialect="+tt.dialect, func(t *testing.T) {
			t.Parallel()
			h, got := recording(t, streamOf(fullStream("s", 1)...))
			srv := serve(t, h)
			c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Dialect = tt.dialect })
			rec := c.Do(t.Context(), request(`id "quoted" é`))
			wantClass(t, rec, ErrNone)
			sent := <-got
			for _, f := range []string{"rid", "request_id"} {
				v, ok := sent.body[f]
				if f == tt.field && v != `id "quoted" é` {
					t.Errorf("body %s = %v, want the request id", f, v)
				}
				if f != tt.field && ok {
					t.Errorf("body has %s = %v; dialect %q must not send it", f, v, tt.dialect)
				}
			}
			if h := sent.header.Get("X-Request-Id"); h != `id "quoted" é` {
				t.Errorf("X-Request-Id = %q", h)
			}
		})
	}
}

func TestDoWithoutUsageCountsChunks(t *testing.T) {
	t.Parallel()
	events := []string{roleEvent("s"), contentEvent("s", "a"), contentEvent("s", "b"), contentEvent("s", "c"),
		finishEvent("s", "stop"), doneEvent}
	h, got := recording(t, streamOf(events...))
	srv := serve(t, h)
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.IncludeUsage = false })

	rec := c.Do(t.Context(), request("r"))

	wantClass(t, rec, ErrNone)
	checkTimeline(t, rec)
	if rec.TokenSource != TokensFromChunks || rec.OutputTokens != 3 || rec.PromptTokens != 0 {
		t.Errorf("tokens: source %q output %d prompt %d, want chunks 3 0", rec.TokenSource, rec.OutputTokens, rec.PromptTokens)
	}
	if rec.FinishReason != "stop" {
		t.Errorf("FinishReason = %q, want stop", rec.FinishReason)
	}
	if _, ok := (<-got).body["stream_options"]; ok {
		t.Error("stream_options sent although IncludeUsage is off")
	}
}

func TestDoChunkTokensFromContinuousUsage(t *testing.T) {
	t.Parallel()
	// A running usage on every chunk (vLLM continuous_usage_stats): the
	// growth of completion_tokens is each chunk's token count.
	ev := func(text string, completion int) string {
		return `data: {"id":"s","choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":null}],"usage":{"prompt_tokens":4,"completion_tokens":` +
			strconv.Itoa(completion) + `}}` + "\n\n"
	}
	events := []string{ev("a", 1), ev("bcd", 4), ev("ef", 6), finishEvent("s", "stop"), usageEvent("s", 4, 6, 0), doneEvent}
	srv := serve(t, streamOf(events...))
	c := newTestClient(t, srv.URL, nil)

	rec := c.Do(t.Context(), request("r"))

	wantClass(t, rec, ErrNone)
	var tokens []int32
	for _, ch := range rec.Chunks {
		tokens = append(tokens, ch.Tokens)
	}
	if d := cmp.Diff([]int32{1, 3, 2}, tokens); d != "" {
		t.Errorf("chunk tokens (-want +got):\n%s", d)
	}
	if rec.OutputTokens != 6 {
		t.Errorf("OutputTokens = %d, want 6", rec.OutputTokens)
	}
}

func TestDoUsageOnlyOnLastContentChunk(t *testing.T) {
	t.Parallel()
	// Usage arriving on the last content chunk only is the total, not that
	// chunk's count.
	last := `data: {"id":"s","choices":[{"index":0,"delta":{"content":"c"},"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":3}}` + "\n\n"
	srv := serve(t, streamOf(contentEvent("s", "a"), contentEvent("s", "b"), last, doneEvent))
	c := newTestClient(t, srv.URL, nil)

	rec := c.Do(t.Context(), request("r"))

	wantClass(t, rec, ErrNone)
	for i, ch := range rec.Chunks {
		if ch.Tokens != 1 {
			t.Errorf("chunk %d: %d tokens, want 1", i, ch.Tokens)
		}
	}
	if rec.OutputTokens != 3 || rec.TokenSource != TokensFromUsage {
		t.Errorf("output %d from %q, want 3 from usage", rec.OutputTokens, rec.TokenSource)
	}
}
