package calibrate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/llmbench-org/llmbench/workload"
)

// MaxCount bounds the prompts one Count call asks the tokenizer about.
const MaxCount = 1000

// ErrNoTokenizer says the engine serves no tokenizer endpoint: the length
// of real text is then known only from usage.prompt_tokens of the requests
// themselves, after they were sent.
var ErrNoTokenizer = errors.New("calibrate: the engine serves no tokenizer endpoint (llama.cpp /apply-template + /tokenize, vLLM or SGLang /tokenize, TGI /chat_tokenize): prompt lengths come from usage.prompt_tokens only")

// Counted is what the engine's tokenizer counted for each prompt.
type Counted struct {
	Method string   `json:"method"` // MethodTokenize, MethodApplyTemplate or MethodNone
	Source string   `json:"source"` // the endpoints that answered
	Tokens []int    `json:"tokens"` // per prompt, in order: the prompt tokens the engine counts for it, template included
	Notes  []string `json:"notes"`
}

// Count asks the engine's tokenizer how many prompt tokens it counts for
// each request's messages on cfg.Endpoint (chat: through its chat template,
// as usage.prompt_tokens will say), so that a run with real text (file
// datasets) can record the engine-counted prompt length beside the plan's.
// It sends one or two requests per prompt, one after the other, and refuses
// more than MaxCount prompts (count a sample). It never sends generation
// requests: without a tokenizer endpoint it returns MethodNone and
// ErrNoTokenizer. On a failure part way, Tokens holds the prompts counted
// before it.
func Count(ctx context.Context, cfg Config, prompts [][]workload.Message) (Counted, error) {
	cfg, err := cfg.validate()
	if err != nil {
		return Counted{Method: MethodNone}, err
	}
	if len(prompts) > MaxCount {
		return Counted{Method: MethodNone}, fmt.Errorf("calibrate: %d prompts to count, at most %d: count a sample", len(prompts), MaxCount)
	}
	out := Counted{Method: MethodNone}
	if len(prompts) == 0 {
		return out, nil
	}
	p := newPoster(cfg)
	var use *counter
	for _, c := range asSent(cfg, counters(cfg, p)) {
		n, err := c.request(ctx, prompts[0])
		if err == nil {
			use = c
			out.Tokens = append(out.Tokens, n)
			break
		}
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		out.Notes = append(out.Notes, skipNote(c, err))
	}
	if use == nil {
		out.Notes = append(out.Notes, ErrNoTokenizer.Error())
		return out, fmt.Errorf("%w (%s)", ErrNoTokenizer, strings.Join(out.Notes[:len(out.Notes)-1], "; "))
	}
	out.Method, out.Source = use.method, use.source
	for i := 1; i < len(prompts); i++ {
		n, err := use.request(ctx, prompts[i])
		if err != nil {
			return out, fmt.Errorf("calibrate: counting prompt %d: %w", i, err)
		}
		out.Tokens = append(out.Tokens, n)
	}
	return out, nil
}
