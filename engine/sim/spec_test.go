package sim

import (
	"slices"
	"strings"
	"testing"
)

// TestSpeculativeDecoding: with drafts accepted, one chunk carries several
// tokens; usage, truth and each dialect's token metrics still agree.
func TestSpeculativeDecoding(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{DialectSGLang, DialectVLLM, DialectFastDeploy} {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			p, _ := Preset("tiny")
			p.SpecTokens, p.SpecAcceptRate = 3, 1
			e, ep := startEngine(t, Config{Dialect: dialect, Params: p})
			res := postStream(t, newClient(), ep.BaseURL+"/chat/completions", clockSince(), map[string]string{"X-Request-Id": "spec"}, chatBody(map[string]any{
				"messages": []map[string]any{{"role": "user", "content": "a b c"}},
				"stream":   true, "stream_options": map[string]any{"include_usage": true},
				"max_tokens": 13, "ignore_eos": true, "rid": "spec", "request_id": "spec",
			}))
			var perChunk []int
			for _, c := range res.chunks {
				if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
					perChunk = append(perChunk, len(strings.Fields(c.Choices[0].Delta.Content)))
				}
			}
			// 1 token from prefill, then 4 per pass (1 + 3 accepted drafts).
			if want := []int{1, 4, 4, 4}; !slices.Equal(perChunk, want) {
				t.Errorf("tokens per chunk %v, want %v", perChunk, want)
			}
			u := res.chunks[len(res.chunks)-1].Usage
			tr := e.Truth()[0]
			if u.CompletionTokens != 13 || tr.OutputTokens != 13 || len(tr.TokenFlushes) != 13 {
				t.Errorf("usage %d, truth %d tokens / %d flushes", u.CompletionTokens, tr.OutputTokens, len(tr.TokenFlushes))
			}
			if tr.TokenFlushes[1] != tr.TokenFlushes[4] || tr.TokenFlushes[4] == tr.TokenFlushes[5] {
				t.Errorf("tokens of one chunk must share its flush time: %v", tr.TokenFlushes)
			}
			m := scrape(t, ep.MetricsURL)
			switch dialect {
			case DialectSGLang:
				// Tokens after the first, as SGLang's hand-rolled ITL counts them.
				if n, _ := histCount(t, m, "sglang:inter_token_latency_seconds"); n != 12 {
					t.Errorf("ITL count %d, want 12 tokens", n)
				}
				if v := value(t, m, "sglang:generation_tokens_total"); v != 13 {
					t.Errorf("generation tokens %v", v)
				}
			case DialectVLLM:
				// One observation per request per pass, whatever the tokens.
				if n, _ := histCount(t, m, "vllm:inter_token_latency_seconds"); n != 3 {
					t.Errorf("ITL count %d, want 3 passes", n)
				}
				if v := value(t, m, "vllm:spec_decode_num_accepted_tokens_total"); v != 9 {
					t.Errorf("accepted drafts %v, want 9", v)
				}
			case DialectFastDeploy:
				if n, _ := histCount(t, m, "fastdeploy:time_per_output_token_seconds"); n != 3 {
					t.Errorf("TPOT count %d, want 3 passes", n)
				}
				if v := value(t, m, "fastdeploy:spec_decode_draft_acceptance_rate"); v != 1 {
					t.Errorf("acceptance rate %v", v)
				}
			}
		})
	}
}
