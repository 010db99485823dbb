package llamacpp

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestProps: /props states the per-slot context (the context size divided
// by the slots) and the number of slots, where llmbench reads them.
func TestProps(t *testing.T) {
	for _, tg := range both(t) {
		resp, err := client.Get(tg.root + "/props")
		if err != nil {
			t.Fatalf("%s: /props: %v", tg.name, err)
		}
		var props map[string]any
		decode(t, tg, resp, &props)
		if n, _ := num(props, "default_generation_settings", "n_ctx"); n != slotCtx {
			t.Errorf("%s: /props default_generation_settings.n_ctx = %v, want %d", tg.name, n, slotCtx)
		}
		if n, _ := num(props, "total_slots"); n != slots {
			t.Errorf("%s: /props total_slots = %v, want %d", tg.name, n, slots)
		}
	}
}

// TestTokenizeAndTemplate: /tokenize answers {"tokens": [ids]} for
// {"content"}; /apply-template answers {"prompt"} for {"messages"}; the
// templated prompt tokenized with add_special (the BOS a chat request gets)
// counts exactly the chat request's usage.prompt_tokens.
func TestTokenizeAndTemplate(t *testing.T) {
	const text = "the quick brown fox jumps over the lazy dog"
	for _, tg := range both(t) {
		code, tok := postJSON(t, tg, "/tokenize", map[string]any{"content": text})
		ids, _ := tok["tokens"].([]any)
		if code != http.StatusOK || len(ids) == 0 {
			t.Fatalf("%s: /tokenize: %d %v", tg.name, code, tok)
		}
		for _, id := range ids {
			if _, ok := id.(float64); !ok {
				t.Errorf("%s: /tokenize: token %v is not a number", tg.name, id)
			}
		}
		msgs := []map[string]any{{"role": "user", "content": text}}
		code, tmpl := postJSON(t, tg, "/apply-template", map[string]any{"messages": msgs})
		prompt, _ := tmpl["prompt"].(string)
		if code != http.StatusOK || !strings.Contains(prompt, text) {
			t.Fatalf("%s: /apply-template: %d %v", tg.name, code, tmpl)
		}
		_, tok = postJSON(t, tg, "/tokenize", map[string]any{"content": prompt, "add_special": true})
		templated, _ := tok["tokens"].([]any)
		code, ans := postJSON(t, tg, "/v1/chat/completions", chat(tg, text, 1))
		pt, _ := num(ans, "usage", "prompt_tokens")
		if code != http.StatusOK || int(pt) != len(templated) {
			t.Errorf("%s: the chat request counted %v prompt tokens (status %d); /tokenize of /apply-template's prompt with add_special %d",
				tg.name, pt, code, len(templated))
		}
		t.Logf("%s: %d words, %d tokens; templated %d", tg.name, len(strings.Fields(text)), len(ids), len(templated))
	}
}

var idPattern = regexp.MustCompile(`^chatcmpl-[A-Za-z0-9]{32}$`)

// TestIDs: every response's id is chatcmpl- and 32 alphanumerics, the same
// in every chunk of a stream, new for each request, on /v1/completions too;
// neither X-Request-Id nor a body's request_id comes back.
func TestIDs(t *testing.T) {
	for _, tg := range both(t) {
		seen := map[string]bool{}
		for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
			body := chat(tg, "hello there", 4)
			if path == "/v1/completions" {
				delete(body, "messages")
				body["prompt"] = "hello there"
			}
			body["request_id"] = "mine-body"
			s := stream(t, tg, path, body, "X-Request-Id", "mine-header")
			id := ""
			for _, ev := range s.events {
				got, _ := ev["id"].(string)
				if id == "" {
					id = got
				}
				if got != id {
					t.Errorf("%s %s: chunk id %q after %q", tg.name, path, got, id)
				}
			}
			if !idPattern.MatchString(id) {
				t.Errorf("%s %s: id %q, want chatcmpl- and 32 alphanumerics", tg.name, path, id)
			}
			if seen[id] {
				t.Errorf("%s %s: id %q twice", tg.name, path, id)
			}
			seen[id] = true
			body["stream"] = false
			_, whole := postJSON(t, tg, path, body, "X-Request-Id", "mine-header")
			if w, _ := whole["id"].(string); !idPattern.MatchString(w) || seen[w] {
				t.Errorf("%s %s: whole answer's id %q", tg.name, path, w)
			}
		}
	}
}

// TestStreamShape: a streamed chat answer is a role chunk (content null),
// one chunk per token, the finish_reason in a chunk of its own with an empty
// delta, with include_usage a last chunk of no choices carrying the usage,
// the timings object on the last chunk, then [DONE]; without include_usage
// no usage anywhere and the timings on the finish chunk.
func TestStreamShape(t *testing.T) {
	const maxTokens = 12
	for _, tg := range both(t) {
		for _, withUsage := range []bool{true, false} {
			body := chat(tg, "the quick brown fox jumps over the lazy dog", maxTokens)
			if withUsage {
				body["stream_options"] = map[string]any{"include_usage": true}
			}
			s := stream(t, tg, "/v1/chat/completions", body)
			name := tg.name + map[bool]string{true: " (include_usage)", false: ""}[withUsage]
			if !s.done {
				t.Errorf("%s: no [DONE]", name)
			}
			if ct := s.header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("%s: Content-Type %q", name, ct)
			}
			evs := s.events
			if len(evs) < 3 {
				t.Fatalf("%s: %d events", name, len(evs))
			}
			first := choice0(evs[0])
			delta, _ := first["delta"].(map[string]any)
			if delta["role"] != "assistant" || delta["content"] != nil || len(delta) != 2 {
				t.Errorf("%s: first chunk's delta %v, want role assistant and content null", name, delta)
			}
			last := evs[len(evs)-1]
			finishAt := len(evs) - 1
			if withUsage {
				if cs, ok := last["choices"].([]any); !ok || len(cs) != 0 {
					t.Errorf("%s: last chunk's choices %v, want []", name, last["choices"])
				}
				if n, _ := num(last, "usage", "completion_tokens"); n != maxTokens {
					t.Errorf("%s: usage.completion_tokens %v, want %d", name, n, maxTokens)
				}
				finishAt--
			}
			if _, ok := last["timings"].(map[string]any); !ok {
				t.Errorf("%s: no timings on the last chunk: %v", name, last)
			}
			if n, _ := num(last, "timings", "predicted_n"); n != maxTokens {
				t.Errorf("%s: timings.predicted_n %v, want %d", name, n, maxTokens)
			}
			fc := choice0(evs[finishAt])
			if fc["finish_reason"] != "length" || len(fc["delta"].(map[string]any)) != 0 {
				t.Errorf("%s: finish chunk %v, want finish_reason length and an empty delta", name, fc)
			}
			content := 0
			for i, ev := range evs {
				if _, ok := ev["usage"]; ok && (!withUsage || i != len(evs)-1) {
					t.Errorf("%s: usage in chunk %d: %v", name, i, ev)
				}
				if i == 0 || i >= finishAt {
					continue
				}
				c := choice0(ev)
				d, _ := c["delta"].(map[string]any)
				if _, ok := d["content"].(string); !ok || c["finish_reason"] != nil {
					t.Errorf("%s: chunk %d is not a content chunk: %v", name, i, ev)
				}
				content++
			}
			if content != maxTokens {
				t.Errorf("%s: %d content chunks for %d tokens", name, content, maxTokens)
			}
		}
	}
}

// TestWholeAnswer: a whole chat answer carries the usage with
// prompt_tokens_details.cached_tokens and the timings object.
func TestWholeAnswer(t *testing.T) {
	for _, tg := range both(t) {
		code, ans := postJSON(t, tg, "/v1/chat/completions", chat(tg, "the quick brown fox", 5))
		if code != http.StatusOK {
			t.Fatalf("%s: %d %v", tg.name, code, ans)
		}
		if n, _ := num(ans, "usage", "completion_tokens"); n != 5 {
			t.Errorf("%s: completion_tokens %v", tg.name, n)
		}
		if _, ok := num(ans, "usage", "prompt_tokens_details", "cached_tokens"); !ok {
			t.Errorf("%s: no usage.prompt_tokens_details.cached_tokens: %v", tg.name, ans["usage"])
		}
		for _, k := range []string{"cache_n", "prompt_n", "prompt_ms", "predicted_n", "predicted_ms", "predicted_per_token_ms"} {
			if _, ok := num(ans, "timings", k); !ok {
				t.Errorf("%s: timings.%s missing: %v", tg.name, k, ans["timings"])
			}
		}
		pn, _ := num(ans, "timings", "prompt_n")
		cn, _ := num(ans, "timings", "cache_n")
		pt, _ := num(ans, "usage", "prompt_tokens")
		ct, _ := num(ans, "usage", "prompt_tokens_details", "cached_tokens")
		if pn+cn != pt || cn != ct {
			t.Errorf("%s: timings prompt_n %v + cache_n %v, usage prompt_tokens %v cached %v", tg.name, pn, cn, pt, ct)
		}
	}
}
