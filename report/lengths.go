package report

import (
	"fmt"

	"github.com/llmbench-org/llmbench/client"
)

// ContextTruncated counts the successful requests that stopped before their
// max_tokens because they reached the engine's context: finish_reason
// "length" with fewer output tokens than max_tokens is a length limit that
// is not max_tokens (llama.cpp's per-slot n_ctx, vLLM's max_model_len).
// The engine honoured ignore_eos (a request that ignored it ends "stop"),
// so these are not in OutputShort (issue 20: with 512-token slots, every
// request whose prompt plus output filled its slot read as "the engine did
// not honour ignore_eos").
type ContextTruncated struct {
	Requests int `json:"requests"` // that stopped at the context
	Of       int `json:"of"`       // successful requests with a max_tokens
	// TokensShort is the sum of max_tokens − output over them.
	TokensShort int `json:"tokens_short"`
	// ContextMin and ContextMax are the smallest and largest prompt +
	// output among them: where the context ended (one value when every
	// request has the same context).
	ContextMin int `json:"context_min_tokens"`
	ContextMax int `json:"context_max_tokens"`
	// EngineContext is the context the engine stated at the start
	// (RunMeta.Engine.ContextTokens), 0 when unknown.
	EngineContext int `json:"engine_context_tokens,omitempty"`
}

// lengthTally sorts the successful requests that got fewer tokens than
// their max_tokens into those the engine truncated at its context and those
// that stopped early (OutputShort: ignore_eos or min_tokens not honoured).
type lengthTally struct {
	short     OutputShort
	shortFrac float64 // Σ output ÷ max_tokens over the short requests
	truncated ContextTruncated
}

// add counts one successful request.
func (l *lengthTally) add(r *client.Record) {
	if r.MaxTokens <= 0 {
		return
	}
	l.short.Of++
	l.truncated.Of++
	l.short.PlannedTokens += r.MaxTokens
	if r.OutputTokens >= r.MaxTokens {
		return
	}
	if r.FinishReason == "length" {
		t := &l.truncated
		ctx := r.PromptTokens + r.OutputTokens
		if t.Requests == 0 || ctx < t.ContextMin {
			t.ContextMin = ctx
		}
		t.ContextMax = max(t.ContextMax, ctx)
		t.Requests++
		t.TokensShort += r.MaxTokens - r.OutputTokens
		return
	}
	l.short.Requests++
	l.short.TokensShort += r.MaxTokens - r.OutputTokens
	l.shortFrac += float64(r.OutputTokens) / float64(r.MaxTokens)
}

// into sets the tallies on t (each only when some request counts in it).
func (l *lengthTally) into(t *TokenCounts) {
	if l.short.Requests > 0 {
		short := l.short
		short.MissingFraction = float64(short.TokensShort) / float64(short.PlannedTokens)
		short.MeanFraction = l.shortFrac / float64(short.Requests)
		t.OutputShort = &short
	}
	if l.truncated.Requests > 0 {
		tr := l.truncated
		t.ContextTruncated = &tr
	}
}

// contextNote says that requests stopped at the engine's context ("" when
// none did): not a warning about the engine, a property of the plan.
func contextNote(t TokenCounts) string {
	c := t.ContextTruncated
	if c == nil || c.Requests == 0 {
		return ""
	}
	at := fmt.Sprintf("%d tokens", c.ContextMax)
	if c.ContextMin != c.ContextMax {
		at = fmt.Sprintf("%d to %d tokens", c.ContextMin, c.ContextMax)
	}
	stated := ""
	switch {
	case c.EngineContext > 0 && c.ContextMax == c.EngineContext:
		stated = fmt.Sprintf(", the %d tokens per request the engine states", c.EngineContext)
	case c.EngineContext > 0:
		stated = fmt.Sprintf("; the engine states %d tokens per request", c.EngineContext)
	}
	return fmt.Sprintf("%d of %d requests stopped at the engine's context (finish_reason length at prompt + output = %s%s, %d output tokens fewer than max_tokens in all): the engine honoured ignore_eos; the plan asks for more than its context holds",
		c.Requests, c.Of, at, stated, c.TokensShort)
}
