package sim

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/internal/quiet"
)

// TestConcurrentStreamsAgreeWithTruth runs 16 concurrent streams and checks
// that the truth, the metrics and what the clients saw agree exactly on
// counts and ids, and on the order of events.
func TestConcurrentStreamsAgreeWithTruth(t *testing.T) {
	t.Parallel()
	e, ep := startEngine(t, Config{TruthPath: t.TempDir() + "/truth.jsonl"})
	client := newClient()
	before := scrape(t, ep.MetricsURL)
	clock := clockSince()
	const streams, perStream = 16, 4
	results := make(map[string]streamResult)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for u := range streams {
		wg.Go(func() {
			for i := range perStream {
				id := fmt.Sprintf("u%d-r%d", u, i)
				res := postStream(t, client, ep.BaseURL+"/chat/completions", clock, map[string]string{"X-Request-Id": id}, chatBody(map[string]any{
					"messages":       []map[string]any{{"role": "user", "content": words(id, 20+u*10)}},
					"stream":         true,
					"stream_options": map[string]any{"include_usage": true},
					"max_tokens":     8 + i,
					"ignore_eos":     true,
					"rid":            id,
				}))
				mu.Lock()
				results[id] = res
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	after := scrape(t, ep.MetricsURL)

	truth := map[string]RequestTruth{}
	for _, tr := range e.Truth() {
		truth[tr.ID] = tr
	}
	var prompt, output int
	for id, res := range results {
		if res.status != http.StatusOK || !res.done {
			t.Errorf("%s: status %d done %v", id, res.status, res.done)
			continue
		}
		u := res.chunks[len(res.chunks)-1].Usage
		prompt += u.PromptTokens
		output += u.CompletionTokens
		var textTokens int
		for _, c := range res.chunks {
			if len(c.Choices) > 0 {
				textTokens += len(strings.Fields(c.Choices[0].Delta.Content))
			}
		}
		if textTokens != u.CompletionTokens {
			t.Errorf("%s: %d words streamed, usage says %d", id, textTokens, u.CompletionTokens)
		}
		tr, ok := truth[id]
		if !ok {
			t.Errorf("%s: no truth", id)
			continue
		}
		if tr.OutputTokens != u.CompletionTokens || tr.PromptTokens != u.PromptTokens || len(tr.TokenFlushes) != tr.OutputTokens {
			t.Errorf("%s: truth %d/%d tokens (%d flushes), usage %d/%d", id, tr.PromptTokens, tr.OutputTokens, len(tr.TokenFlushes), u.PromptTokens, u.CompletionTokens)
		}
		// Content chunks and truth flushes pair one to one, in order.
		clientGaps, truthGaps := contentGaps(res), flushGaps(tr)
		if len(clientGaps) != len(truthGaps) {
			t.Errorf("%s: %d client gaps vs %d truth gaps", id, len(clientGaps), len(truthGaps))
		}
	}
	if n := len(truth); n != streams*perStream {
		t.Errorf("%d truth records, want %d", n, streams*perStream)
	}
	for name, want := range map[string]float64{
		"sglang:prompt_tokens_total":     float64(prompt),
		"sglang:generation_tokens_total": float64(output),
		"sglang:num_requests_total":      streams * perStream,
	} {
		if d := value(t, after, name) - value(t, before, name); d != want {
			t.Errorf("Δ%s = %v, want %v", name, d, want)
		}
	}
	n, _ := histCount(t, after, "sglang:inter_token_latency_seconds")
	if want := uint64(output - streams*perStream); n != want {
		t.Errorf("ITL count %d, want tokens after the first = %d", n, want)
	}
}

func contentGaps(res streamResult) []time.Duration {
	var at []time.Duration
	for i, c := range res.chunks {
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
			at = append(at, res.arrivals[i])
		}
	}
	var gaps []time.Duration
	for i := 1; i < len(at); i++ {
		gaps = append(gaps, at[i]-at[i-1])
	}
	return gaps
}

func flushGaps(tr RequestTruth) []time.Duration {
	var gaps []time.Duration
	for i := 1; i < len(tr.TokenFlushes); i++ {
		gaps = append(gaps, tr.TokenFlushes[i]-tr.TokenFlushes[i-1])
	}
	return gaps
}

// TestEOSBehaviour: without ignore_eos the model stops at its natural length
// ("stop"); ignore_eos runs to max_tokens ("length"); min_tokens holds EOS off.
func TestEOSBehaviour(t *testing.T) {
	t.Parallel()
	quiet.Busy(t) // loads the machine: a timing-sensitive test elsewhere waits for it
	p, _ := Preset("tiny")
	p.EOSMeanTokens = 4
	_, ep := startEngine(t, Config{Params: p})
	client := newClient()
	run := func(id string, extra map[string]any) (finish string, n int) {
		body := map[string]any{
			"messages": []map[string]any{{"role": "user", "content": "hello there"}},
			"stream":   true, "stream_options": map[string]any{"include_usage": true},
			"max_tokens": 60, "rid": id,
		}
		for k, v := range extra {
			body[k] = v
		}
		res := postStream(t, client, ep.BaseURL+"/chat/completions", clockSince(), nil, chatBody(body))
		if res.status != 200 {
			t.Fatalf("%s: status %d", id, res.status)
		}
		fin := res.chunks[len(res.chunks)-2].Choices[0].FinishReason
		return *fin, res.chunks[len(res.chunks)-1].Usage.CompletionTokens
	}
	stops := 0
	for i := range 10 {
		id := fmt.Sprintf("eos-%d", i)
		finish, n := run(id, nil)
		want := min(60, NaturalLengthOf(p, id))
		if n != want {
			t.Errorf("%s: %d tokens, want natural length %d", id, n, want)
		}
		if finish == "stop" {
			stops++
		}
		if finish, n := run(id+"-ignore", map[string]any{"ignore_eos": true}); finish != "length" || n != 60 {
			t.Errorf("%s ignore_eos: %s after %d tokens, want length after 60", id, finish, n)
		}
		if _, n := run(id+"-min", map[string]any{"min_tokens": 30}); n < 30 {
			t.Errorf("%s min_tokens 30: %d tokens", id, n)
		}
	}
	if stops < 9 {
		t.Errorf("only %d of 10 requests stopped naturally with a mean length of 4", stops)
	}
}
