package llamacpp

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// decode reads a JSON answer into v.
func decode(t *testing.T, tg target, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %s answered %d with non-JSON %q", tg.name, resp.Request.URL.Path, resp.StatusCode, raw)
	}
}

// promptOf is the prompt tokens a chat request of content counts.
func promptOf(t *testing.T, tg target, content string) int {
	t.Helper()
	code, ans := postJSON(t, tg, "/v1/chat/completions", chat(tg, content, 1))
	n, _ := num(ans, "usage", "prompt_tokens")
	if code != http.StatusOK || n == 0 {
		t.Fatalf("%s: probing the prompt: %d %v", tg.name, code, ans)
	}
	return int(n)
}

// TestContextLimits: the per-slot context bounds each request. A prompt of
// the slot's context or more is a 400 exceed_context_size_error naming both
// counts, streamed or not (the error comes before any event); a prompt that
// fits is served, and generation stops at the slot's end with
// finish_reason length: prompt + output = the slot's context.
func TestContextLimits(t *testing.T) {
	for _, tg := range both(t) {
		// Each word is one token mid-sentence on both engines: the prompt of
		// k+n words counts n more than that of k.
		base := promptOf(t, tg, words(100))
		fill := func(p int) string { return words(100 + p - base) }
		for _, over := range []int{slotCtx, slotCtx + 100} {
			for _, streamed := range []bool{false, true} {
				body := chat(tg, fill(over), 10)
				body["stream"] = streamed
				resp := post(t, tg, "/v1/chat/completions", body)
				var e struct {
					Error struct {
						Code          int    `json:"code"`
						Type          string `json:"type"`
						Message       string `json:"message"`
						NPromptTokens int    `json:"n_prompt_tokens"`
						NCtx          int    `json:"n_ctx"`
					} `json:"error"`
				}
				status := resp.StatusCode
				decode(t, tg, resp, &e)
				if status != http.StatusBadRequest || e.Error.Code != 400 || e.Error.Type != "exceed_context_size_error" ||
					e.Error.NPromptTokens != over || e.Error.NCtx != slotCtx {
					t.Errorf("%s: a prompt of %d tokens (stream %v): %d %+v, want 400 exceed_context_size_error with n_prompt_tokens %d and n_ctx %d",
						tg.name, over, streamed, status, e.Error, over, slotCtx)
				}
			}
		}
		for _, fits := range []int{slotCtx - 1, slotCtx - 40} {
			code, ans := postJSON(t, tg, "/v1/chat/completions", chat(tg, fill(fits), 1000))
			pt, _ := num(ans, "usage", "prompt_tokens")
			ct, _ := num(ans, "usage", "completion_tokens")
			c := choice0(ans)
			if code != http.StatusOK || int(pt) != fits || int(pt+ct) != slotCtx || c["finish_reason"] != "length" {
				t.Errorf("%s: a prompt of %d tokens with max_tokens 1000: %d, prompt %v + completion %v (finish %v), want %d in all, finish length",
					tg.name, fits, code, pt, ct, c["finish_reason"], slotCtx)
			}
		}
	}
}
