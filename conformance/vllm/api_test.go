package vllm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// promptTokens is what the target's /tokenize says one user message costs
// through the chat template.
func promptTokens(t *testing.T, tg target, content string) int {
	t.Helper()
	code, out := postJSON(t, tg, "/tokenize", map[string]any{"model": tg.model,
		"messages": []map[string]any{{"role": "user", "content": content}}})
	n, ok := num(out, "count")
	if code != http.StatusOK || !ok {
		t.Fatalf("%s: /tokenize messages: %d %v", tg.name, code, out)
	}
	return int(n)
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestTokenize: /tokenize with a prompt or with messages answers the same
// members on both engines, its count is its tokens' and, for messages, the
// chat request's usage.prompt_tokens; max_model_len is /v1/models'; a body
// with neither is a 400 in the OpenAI error shape.
func TestTokenize(t *testing.T) {
	for _, tg := range both(t) {
		t.Run(tg.name, func(t *testing.T) {
			for _, body := range []map[string]any{
				{"model": tg.model, "prompt": "hello world"},
				{"model": tg.model, "messages": []map[string]any{{"role": "user", "content": "hello world"}}},
			} {
				code, out := postJSON(t, tg, "/tokenize", body)
				if code != http.StatusOK {
					t.Fatalf("%v: %d %v", body, code, out)
				}
				if got, want := keys(out), []string{"count", "max_model_len", "token_strs", "tokens"}; !slices.Equal(got, want) {
					t.Errorf("members %v, want %v", got, want)
				}
				toks, _ := out["tokens"].([]any)
				if n, _ := num(out, "count"); int(n) != len(toks) || n == 0 {
					t.Errorf("count %v for %d tokens", n, len(toks))
				}
				if out["token_strs"] != nil {
					t.Errorf("token_strs %v, want null unless asked for", out["token_strs"])
				}
				if n, _ := num(out, "max_model_len"); int(n) != maxModelLen {
					t.Errorf("max_model_len %v, want %d", n, maxModelLen)
				}
			}
			prompt := promptTokens(t, tg, "hello world")
			code, out := postJSON(t, tg, "/v1/chat/completions", chat(tg, "hello world", 1, nil))
			if n, _ := num(out, "usage", "prompt_tokens"); code != http.StatusOK || int(n) != prompt {
				t.Errorf("chat usage.prompt_tokens %v (status %d), /tokenize said %d", n, code, prompt)
			}
			code, out = postJSON(t, tg, "/tokenize", map[string]any{"model": tg.model})
			checkError(t, code, out, http.StatusBadRequest, "")
		})
	}
}

// checkError holds an error answer to OpenAI's shape: {"error": {message,
// type, param, code}} with code the status; wantType "" = any.
func checkError(t *testing.T, code int, out map[string]any, want int, wantType string) {
	t.Helper()
	if code != want {
		t.Errorf("status %d, want %d: %v", code, want, out)
	}
	e, ok := out["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object: %v", out)
	}
	if got := keys(e); !slices.Equal(got, []string{"code", "message", "param", "type"}) {
		t.Errorf("error members %v", got)
	}
	if c, _ := num(e, "code"); int(c) != want {
		t.Errorf("error.code %v, want %d", e["code"], want)
	}
	if wantType != "" && e["type"] != wantType {
		t.Errorf("error.type %v, want %s", e["type"], wantType)
	}
}

// TestRequestIDs: X-Request-Id, else the body's request_id, becomes
// chatcmpl-<id> in a stream's every chunk and a whole answer; with neither,
// the id is chatcmpl- and 16 hex digits, as measured on vLLM 0.32.0; the
// same on /v1/completions with cmpl-.
func TestRequestIDs(t *testing.T) {
	auto := regexp.MustCompile(`^chatcmpl-[0-9a-f]{16}$`)
	autoCompletion := regexp.MustCompile(`^cmpl-[0-9a-f]{16}$`)
	for _, tg := range both(t) {
		t.Run(tg.name, func(t *testing.T) {
			s := readSSE(t, tg, post(t, client, tg, "/v1/chat/completions",
				chat(tg, "hello", 3, map[string]any{"stream": true}), "X-Request-Id", "hdr-1"))
			for _, ev := range s.events {
				if ev["id"] != "chatcmpl-hdr-1" {
					t.Errorf("stream chunk id %v, want chatcmpl-hdr-1", ev["id"])
				}
			}
			_, out := postJSON(t, tg, "/v1/chat/completions", chat(tg, "hello", 1, map[string]any{"request_id": "body-1"}))
			if out["id"] != "chatcmpl-body-1" {
				t.Errorf("body request_id: id %v, want chatcmpl-body-1", out["id"])
			}
			_, out = postJSON(t, tg, "/v1/chat/completions", chat(tg, "hello", 1, map[string]any{"request_id": "body-2"}), "X-Request-Id", "hdr-2")
			if out["id"] != "chatcmpl-hdr-2" {
				t.Errorf("both: id %v, want the header's chatcmpl-hdr-2", out["id"])
			}
			_, out = postJSON(t, tg, "/v1/chat/completions", chat(tg, "hello", 1, nil))
			if id, _ := out["id"].(string); !auto.MatchString(id) {
				t.Errorf("no id given: %q, want chatcmpl- and 16 hex digits", id)
			}
			_, out = postJSON(t, tg, "/v1/completions", map[string]any{"model": tg.model, "prompt": "hello", "max_tokens": 1}, "X-Request-Id", "hdr-3")
			if out["id"] != "cmpl-hdr-3" {
				t.Errorf("/v1/completions: id %v, want cmpl-hdr-3", out["id"])
			}
			_, out = postJSON(t, tg, "/v1/completions", map[string]any{"model": tg.model, "prompt": "hello", "max_tokens": 1})
			if id, _ := out["id"].(string); !autoCompletion.MatchString(id) {
				t.Errorf("/v1/completions, no id given: %q, want cmpl- and 16 hex digits", id)
			}
		})
	}
}

// TestStreamShapes: a chat stream opens with the assistant role and empty
// content, carries content deltas, ends its choices with exactly one
// finish_reason in the last chunk that has choices, then (include_usage)
// one chunk with no choices and the usage, then [DONE]; without
// include_usage no chunk has a usage.
func TestStreamShapes(t *testing.T) {
	for _, tg := range both(t) {
		t.Run(tg.name, func(t *testing.T) {
			for _, withUsage := range []bool{true, false} {
				extra := map[string]any{"stream": true, "ignore_eos": true}
				if withUsage {
					extra["stream_options"] = map[string]any{"include_usage": true}
				}
				s := readSSE(t, tg, post(t, client, tg, "/v1/chat/completions", chat(tg, "hello world", 6, extra)))
				if ct := s.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
					t.Errorf("Content-Type %q", ct)
				}
				if !s.done || len(s.events) < 3 {
					t.Fatalf("done %v after %d events", s.done, len(s.events))
				}
				first := s.events[0]["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
				if first["role"] != "assistant" || first["content"] != "" {
					t.Errorf("first delta %v, want role assistant and empty content", first)
				}
				withChoices := s.events
				if withUsage {
					last := s.events[len(s.events)-1]
					if ch, _ := last["choices"].([]any); len(ch) != 0 || last["usage"] == nil {
						t.Errorf("last chunk %v: want no choices and the usage", last)
					}
					if n, _ := num(last, "usage", "completion_tokens"); n != 6 {
						t.Errorf("usage.completion_tokens %v, want 6", n)
					}
					withChoices = s.events[:len(s.events)-1]
				}
				finishes, contentChunks := 0, 0
				for _, ev := range withChoices[1:] {
					if _, ok := ev["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)["content"]; ok {
						contentChunks++
					}
				}
				// One chunk per token at most: vLLM holds back a token that
				// ends inside a UTF-8 character until the next completes it,
				// which a random-weight model's byte tokens make common.
				if contentChunks < 1 || contentChunks > 6 {
					t.Errorf("%d chunks carry content, want 1 to 6 for 6 tokens", contentChunks)
				}
				finish := withChoices[len(withChoices)-1]["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
				if _, withToken := finish["content"]; withToken == tg.finishAlone {
					t.Errorf("the finish_reason's delta %v: the finish alone is %v here, the token's own chunk is the real vLLM's", finish, tg.finishAlone)
				}
				for i, ev := range withChoices {
					if u, ok := ev["usage"]; ok && u != nil {
						t.Errorf("chunk %d carries a usage %v", i, u)
					}
					ch, _ := ev["choices"].([]any)
					if len(ch) != 1 {
						t.Fatalf("chunk %d: %d choices", i, len(ch))
					}
					if r := ch[0].(map[string]any)["finish_reason"]; r != nil {
						finishes++
						if i != len(withChoices)-1 || r != "length" {
							t.Errorf("chunk %d of %d: finish_reason %v", i, len(withChoices), r)
						}
					}
				}
				if finishes != 1 {
					t.Errorf("%d finish reasons, want 1", finishes)
				}
			}
		})
	}
}

// TestKeepAlive: after a whole stream, the next request reuses the
// connection (llama-server, by contrast, closes it: issue 22).
func TestKeepAlive(t *testing.T) {
	for _, tg := range both(t) {
		t.Run(tg.name, func(t *testing.T) {
			c := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}, Timeout: client.Timeout}
			defer c.CloseIdleConnections()
			var reused []bool
			for i := range 3 {
				trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = append(reused, info.Reused) }}
				body := chat(tg, "hello", 4, map[string]any{"stream": i != 1})
				resp := post(t, c, tg, "/v1/chat/completions", body)
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, tg.root+"/v1/models", nil)
				r2, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, r2.Body)
				_ = r2.Body.Close()
				if resp.Close || r2.Close {
					t.Errorf("request %d: the server asked to close the connection", i)
				}
			}
			if !slices.Equal(reused, []bool{true, true, true}) {
				t.Errorf("connection reused %v, want every time", reused)
			}
		})
	}
}

// TestContextLimit: /v1/models states max_model_len; a prompt over it is a
// 400 BadRequestError naming the limit; a prompt that fits with max_tokens
// that do not is served, its output cut where the context is full.
func TestContextLimit(t *testing.T) {
	for _, tg := range both(t) {
		t.Run(tg.name, func(t *testing.T) {
			resp, err := client.Get(tg.root + "/v1/models")
			if err != nil {
				t.Fatal(err)
			}
			s := readJSON(t, resp)
			data, _ := s["data"].([]any)
			if len(data) != 1 {
				t.Fatalf("/v1/models: %v", s)
			}
			if n, _ := num(data[0], "max_model_len"); int(n) != maxModelLen {
				t.Errorf("/v1/models max_model_len %v, want %d", n, maxModelLen)
			}
			long := strings.Repeat("hello ", maxModelLen+50)
			code, out := postJSON(t, tg, "/v1/chat/completions", chat(tg, long, 2, map[string]any{"stream": true}))
			checkError(t, code, out, http.StatusBadRequest, "BadRequestError")
			if msg, _ := out["error"].(map[string]any)["message"].(string); !strings.Contains(msg, fmt.Sprintf("maximum context length is %d tokens", maxModelLen)) {
				t.Errorf("message %q does not name the limit", msg)
			}
			prompt := promptTokens(t, tg, "hello world")
			code, out = postJSON(t, tg, "/v1/chat/completions", chat(tg, "hello world", maxModelLen, map[string]any{"ignore_eos": true}))
			if code != http.StatusOK {
				t.Fatalf("prompt %d + max_tokens %d: %d %v", prompt, maxModelLen, code, out)
			}
			if n, _ := num(out, "usage", "completion_tokens"); int(n) != maxModelLen-prompt {
				t.Errorf("completion_tokens %v, want the rest of the context %d", n, maxModelLen-prompt)
			}
			if r := out["choices"].([]any)[0].(map[string]any)["finish_reason"]; r != "length" {
				t.Errorf("finish_reason %v, want length", r)
			}
		})
	}
}

func readJSON(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return out
}
