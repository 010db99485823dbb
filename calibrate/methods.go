package calibrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/engines"
	"github.com/llmbench-org/llmbench/workload"
)

// counter asks one engine family's endpoints what the engine counts.
type counter struct {
	method string // MethodTokenize, MethodApplyTemplate or MethodProbe
	family string // who serves these endpoints, for the notes
	// source names the endpoints, filled once they answered.
	source string
	// request counts a request of these messages as the engine counts it on
	// the calibrated endpoint (chat: through its template).
	request func(ctx context.Context, msgs []workload.Message) (int, error)
	// bare counts the tokens of a text alone (no template; special tokens
	// left out where the API allows); nil when the family cannot.
	bare func(ctx context.Context, text string) (int, error)
}

// joined is the prompt the client sends to /completions: the messages'
// contents joined by newlines (client.prompt).
func joined(msgs []workload.Message) string {
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n")
}

// wireMessages is the messages as the engines take them.
func wireMessages(msgs []workload.Message) []map[string]string {
	out := make([]map[string]string, len(msgs))
	for i, m := range msgs {
		out[i] = map[string]string{"role": m.Role, "content": m.Content}
	}
	return out
}

// errShape is an answer of an unexpected shape: another engine family
// answered on that path.
var errShape = errors.New("unexpected answer shape")

// The tokenizer API families, as notes name them; the order they are tried
// in is the engine family's (engines.Family.Tokenize), the probe requests
// last.
const (
	familyLlamaCpp = string(engines.TokenizeLlamaCpp)
	familyVLLM     = string(engines.TokenizeVLLM)
	familyTGI      = string(engines.TokenizeTGI)
	familyUsage    = "usage"
)

// llamaTokens is llama.cpp's /tokenize answer: ids, or {id, piece} objects
// with with_pieces.
type llamaTokens struct {
	Tokens *[]json.RawMessage `json:"tokens"`
	Count  *int               `json:"count"` // vLLM's; present = not llama.cpp
}

func llamaTokenize(ctx context.Context, p poster, url, text string, special bool) (int, error) {
	var out llamaTokens
	if err := p.post(ctx, url, map[string]any{"content": text, "add_special": special}, &out); err != nil {
		return 0, err
	}
	if out.Tokens == nil || out.Count != nil || (len(*out.Tokens) == 0 && strings.TrimSpace(text) != "") {
		return 0, fmt.Errorf("POST %s: %w (want llama.cpp's {\"tokens\": [...]})", url, errShape)
	}
	return len(*out.Tokens), nil
}

// newLlamaCpp: chat = POST {root}/apply-template {"messages"} → {"prompt"},
// then POST {root}/tokenize {"content": prompt, "add_special": true} (the
// BOS the server adds to a chat prompt); completions = /tokenize of the
// prompt with add_special; bare = /tokenize without.
func newLlamaCpp(cfg Config, p poster, root string) *counter {
	tok := endpoints.URL(root, "/tokenize")
	c := &counter{family: familyLlamaCpp}
	c.bare = func(ctx context.Context, text string) (int, error) { return llamaTokenize(ctx, p, tok, text, false) }
	if !cfg.ep.Template() {
		c.method, c.source = MethodTokenize, "POST "+tok
		c.request = func(ctx context.Context, msgs []workload.Message) (int, error) {
			return llamaTokenize(ctx, p, tok, joined(msgs), true)
		}
		return c
	}
	tmpl := endpoints.URL(root, "/apply-template")
	c.method, c.source = MethodApplyTemplate, "POST "+tmpl+" + POST "+tok
	c.request = func(ctx context.Context, msgs []workload.Message) (int, error) {
		var out struct {
			Prompt *string `json:"prompt"`
		}
		if err := p.post(ctx, tmpl, map[string]any{"messages": wireMessages(msgs)}, &out); err != nil {
			return 0, err
		}
		if out.Prompt == nil {
			return 0, fmt.Errorf("POST %s: %w (want {\"prompt\": ...})", tmpl, errShape)
		}
		return llamaTokenize(ctx, p, tok, *out.Prompt, true)
	}
	return c
}

// vllmTokens is vLLM's and SGLang's /tokenize answer.
type vllmTokens struct {
	Count  *int               `json:"count"`
	Tokens *[]json.RawMessage `json:"tokens"`
}

func vllmTokenize(ctx context.Context, p poster, url string, body map[string]any) (int, error) {
	var out vllmTokens
	if err := p.post(ctx, url, body, &out); err != nil {
		return 0, err
	}
	n := -1
	switch {
	case out.Count != nil:
		n = *out.Count
	case out.Tokens != nil:
		n = len(*out.Tokens)
	}
	if n <= 0 { // llama.cpp answers a body without "content" with no tokens
		return 0, fmt.Errorf("POST %s: %w (want {\"count\": N, \"tokens\": [...]})", url, errShape)
	}
	return n, nil
}

// newVLLM: POST {url}/tokenize with {"model", "messages"} (vLLM applies the
// chat template, with add_generation_prompt and without extra special
// tokens, as its chat endpoint does) or {"model", "prompt"} (with the
// special tokens /v1/completions adds); bare = {"prompt",
// "add_special_tokens": false}. url is the server root (vLLM, SGLang) or the
// API root (SGLang's /v1/tokenize).
func newVLLM(cfg Config, p poster, url string) *counter {
	tok := endpoints.URL(url, "/tokenize")
	c := &counter{family: familyVLLM, method: MethodTokenize, source: "POST " + tok}
	c.bare = func(ctx context.Context, text string) (int, error) {
		return vllmTokenize(ctx, p, tok, withModel(cfg, map[string]any{"prompt": text, "add_special_tokens": false}))
	}
	if !cfg.ep.Template() {
		c.request = func(ctx context.Context, msgs []workload.Message) (int, error) {
			return vllmTokenize(ctx, p, tok, withModel(cfg, map[string]any{"prompt": joined(msgs)}))
		}
		return c
	}
	c.request = func(ctx context.Context, msgs []workload.Message) (int, error) {
		return vllmTokenize(ctx, p, tok, withModel(cfg, map[string]any{"messages": wireMessages(msgs), "add_generation_prompt": true}))
	}
	return c
}

// newTGI: chat = POST {root}/chat_tokenize {"model", "messages"} →
// {"tokenize_response": [tokens], "templated_text"}; completions and bare =
// POST {root}/tokenize {"inputs"} → [tokens] (TGI adds the model's special
// tokens there; the bare count's constant is measured and taken off).
func newTGI(cfg Config, p poster, root string) *counter {
	tok := endpoints.URL(root, "/tokenize")
	list := func(ctx context.Context, text string) (int, error) {
		var out []json.RawMessage
		if err := p.post(ctx, tok, map[string]any{"inputs": text}, &out); err != nil {
			return 0, err
		}
		if len(out) == 0 {
			return 0, fmt.Errorf("POST %s: %w (want TGI's [tokens])", tok, errShape)
		}
		return len(out), nil
	}
	c := &counter{family: familyTGI, method: MethodTokenize, bare: list}
	if !cfg.ep.Template() {
		c.source = "POST " + tok
		c.request = func(ctx context.Context, msgs []workload.Message) (int, error) { return list(ctx, joined(msgs)) }
		return c
	}
	chat := endpoints.URL(root, "/chat_tokenize")
	c.source = "POST " + chat + " + POST " + tok
	c.request = func(ctx context.Context, msgs []workload.Message) (int, error) {
		var out struct {
			Tokens *[]json.RawMessage `json:"tokenize_response"`
		}
		if err := p.post(ctx, chat, withModel(cfg, map[string]any{"messages": wireMessages(msgs)}), &out); err != nil {
			return 0, err
		}
		if out.Tokens == nil || len(*out.Tokens) == 0 {
			return 0, fmt.Errorf("POST %s: %w (want {\"tokenize_response\": [...]})", chat, errShape)
		}
		return len(*out.Tokens), nil
	}
	return c
}

// newProbe sends real requests (max_tokens 1, not streamed) and reads
// usage.prompt_tokens.
func newProbe(cfg Config, p poster, base string) *counter {
	if cfg.ep.Kind == endpoints.KindResponses {
		return newResponsesProbe(cfg, p, base) // responses.go
	}
	if cfg.ep.Kind == endpoints.KindMessages {
		return newMessagesProbe(cfg, p, base) // the API's request and usage (messages.go)
	}
	url := endpoints.URL(base, cfg.ep.Path)
	c := &counter{family: familyUsage, method: MethodProbe, source: "POST " + url + " (max_tokens 1, usage.prompt_tokens)"}
	// Probes carry ids of their own, so that an engine's trace log tells
	// them from the run's requests and from foreign traffic.
	idField, _ := client.IDField(cfg.Dialect)
	sent := 0
	c.request = func(ctx context.Context, msgs []workload.Message) (int, error) {
		sent++
		id := client.ProbeIDPrefix + strconv.Itoa(sent)
		body := withModel(cfg, map[string]any{"max_tokens": 1, "stream": false})
		if idField != "" {
			body[idField] = id
		}
		if !cfg.ep.Template() {
			body["prompt"] = joined(msgs)
		} else {
			body["messages"] = wireMessages(msgs)
		}
		var out struct {
			Usage *struct {
				PromptTokens *int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := p.postID(ctx, url, id, body, &out); err != nil {
			return 0, err
		}
		if out.Usage == nil || out.Usage.PromptTokens == nil {
			return 0, fmt.Errorf("POST %s: the answer has no usage.prompt_tokens", url)
		}
		return *out.Usage.PromptTokens, nil
	}
	return c
}

// counters returns the tokenizer counters to try, in order (SGLang's
// /v1/tokenize after /tokenize).
func counters(cfg Config, p poster) []*counter {
	root, base := roots(cfg.BaseURL)
	var out []*counter
	for _, api := range cfg.tokenize {
		switch api {
		case engines.TokenizeLlamaCpp:
			out = append(out, newLlamaCpp(cfg, p, root))
		case engines.TokenizeVLLM:
			out = append(out, newVLLM(cfg, p, root))
			if base != root {
				out = append(out, newVLLM(cfg, p, base))
			}
		case engines.TokenizeTGI:
			out = append(out, newTGI(cfg, p, root))
		default: // engines.Check admits only the APIs above
			panic("calibrate: no counter for tokenizer API " + string(api))
		}
	}
	return out
}

// roots splits the API root (…/v1) into the server root and itself, each
// keeping the base URL's query.
func roots(baseURL string) (root, base string) {
	return endpoints.ServerRoot(baseURL), endpoints.URL(baseURL, "")
}

// withModel adds the model to a request body when one is configured (vLLM
// answers 404 for a model it does not serve, and takes a body without one).
func withModel(cfg Config, body map[string]any) map[string]any {
	if cfg.Model != "" {
		body["model"] = cfg.Model
	}
	return body
}
