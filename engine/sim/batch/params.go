// Package batch is the performance model of the simulated engine: a
// continuous-batching scheduler over a paged KV cache with a radix-style prefix
// cache, chunked prefill, preemption and optional speculative decoding. It is
// pure: it never sleeps and never reads a clock. Schedule forms the next
// forward pass and says how long it takes; Complete applies its outcome. The
// real-time loop in engine/sim drives it; tests drive it step by step.
package batch

import (
	"errors"
	"fmt"
	"time"
)

// Params is the performance model. Every field stands for a piece of GPU
// physics; the presets in engine/sim derive them from hardware and model
// numbers. Durations decode from YAML strings such as "12ms" or "40us".
type Params struct {
	// MaxRunningRequests caps the running batch (SGLang --max-running-requests,
	// vLLM --max-num-seqs): requests beyond it wait in the FCFS queue.
	MaxRunningRequests int `yaml:"max_running_requests"`
	// MaxPrefillTokens is the chunked-prefill budget: uncached prompt tokens
	// computed in one forward pass (SGLang --chunked-prefill-size, vLLM
	// --max-num-batched-tokens). Longer prompts take several steps.
	MaxPrefillTokens int `yaml:"max_prefill_tokens"`
	// MaxModelLen is the context window: prompt + output tokens of one request.
	MaxModelLen int `yaml:"max_model_len"`

	// KVBlockSize is the number of tokens per KV-cache block (page).
	KVBlockSize int `yaml:"kv_block_size"`
	// KVBlocks is the KV-cache capacity in blocks: the HBM left after weights
	// and activations, divided by the bytes of one block.
	KVBlocks int `yaml:"kv_blocks"`
	// PrefixCache turns the radix-style prefix cache on: full prompt blocks
	// already computed by an earlier request are hits and skip prefill.
	PrefixCache bool `yaml:"prefix_cache"`

	// DecodeBase is the fixed time of one forward pass: reading every weight
	// once from HBM (weight bytes ÷ HBM bandwidth) plus launch overhead.
	DecodeBase time.Duration `yaml:"decode_base"`
	// DecodePerSeq is the extra time per decoding sequence in a pass
	// (sampling, per-sequence kernels, activations).
	DecodePerSeq time.Duration `yaml:"decode_per_seq"`
	// DecodePerKVToken is the attention cost per KV token read in a pass
	// (KV bytes per token ÷ HBM bandwidth), summed over decoding sequences.
	DecodePerKVToken time.Duration `yaml:"decode_per_kv_token"`
	// PrefillOverhead is the fixed extra time of a pass that carries prefill.
	PrefillOverhead time.Duration `yaml:"prefill_overhead"`
	// PrefillPerToken is the compute time per uncached prompt token
	// (2 × parameters FLOPs ÷ achievable FLOP/s).
	PrefillPerToken time.Duration `yaml:"prefill_per_token"`
	// Jitter is the relative standard deviation of a pass's duration
	// (seeded, clipped at ±3σ); 0 = none.
	Jitter float64 `yaml:"jitter"`

	// EOSMeanTokens is the mean natural output length: each request draws a
	// geometric length from its id and Seed, and stops there ("stop") unless
	// ignore_eos or min_tokens say otherwise. 0 = the model never emits EOS,
	// so requests run to max_tokens ("length").
	EOSMeanTokens int `yaml:"eos_mean_tokens"`

	// SpecTokens is the number of draft tokens per speculative-decoding step
	// (0 = off). A step emits 1 + the accepted drafts.
	SpecTokens int `yaml:"spec_tokens"`
	// SpecAcceptRate is the probability that each draft token is accepted,
	// drafts being checked in order until the first rejection.
	SpecAcceptRate float64 `yaml:"spec_accept_rate"`
	// SpecDraftCost is the extra time of a pass per draft token (the draft
	// model's own passes).
	SpecDraftCost time.Duration `yaml:"spec_draft_cost"`

	// DecodeLogInterval is SGLang's --decode-log-interval: scheduler gauges
	// are refreshed every this many decode passes (and at each prefill batch).
	DecodeLogInterval int `yaml:"decode_log_interval"`

	// Seed seeds jitter, speculative acceptance and natural lengths.
	Seed int64 `yaml:"seed"`

	// The fields below shape what the engine's HTTP front end (package
	// engine/sim) sends; the scheduler does not read them. Each zero value
	// keeps the behaviour they were added to.

	// ChatTemplateTokens is how many tokens the chat template adds to every
	// chat request (the generation prompt, BOS, ...), and
	// ChatTemplateMessageTokens how many it adds per message (role markers):
	// usage.prompt_tokens = the messages' words + both. /apply-template and
	// /tokenize render and count the same template.
	ChatTemplateTokens        int `yaml:"chat_template_tokens"`
	ChatTemplateMessageTokens int `yaml:"chat_template_message_tokens"`

	// ReasoningTokens makes the first this many generated tokens of every
	// chat answer reasoning (delta.reasoning_content, counted in
	// usage.completion_tokens_details.reasoning_tokens), the rest content.
	ReasoningTokens int `yaml:"reasoning_tokens"`
	// ToolCallRate is the fraction of chat requests offering tools (and not
	// tool_choice "none") whose answer, after any reasoning, is a call of the
	// first offered tool (or the one tool_choice names): delta.tool_calls
	// with the arguments streamed in pieces, finish_reason "tool_calls".
	ToolCallRate float64 `yaml:"tool_call_rate"`
	// EmbeddingDimensions is the length of the vectors /v1/embeddings
	// answers with when the request names no "dimensions" (0: 16).
	EmbeddingDimensions int `yaml:"embedding_dimensions"`

	// StreamInterval coalesces tokens into SSE chunks as SGLang's and vLLM's
	// --stream-interval do: after the first token (sent at once), a chunk is
	// sent when at least this many tokens are pending, and at the end. 0 or
	// 1 = one chunk per forward pass (several tokens with speculative
	// decoding).
	StreamInterval int `yaml:"stream_interval"`
	// NoDone ends streams after finish_reason (and usage) without
	// "data: [DONE]", as some servers do (not a fault: the outcome is ok).
	NoDone bool `yaml:"no_done"`
	// SSEPing writes an SSE comment line (": ping") before every event.
	SSEPing bool `yaml:"sse_ping"`
	// KeepAliveTimeout closes a connection idle this long, and KeepAliveMax
	// closes one after this many requests; when either is set every HTTP/1.1
	// response carries "Keep-Alive: timeout=S, max=N". 0 = the dialect's
	// default: llama.cpp's 5s and 100, none for the others.
	KeepAliveTimeout time.Duration `yaml:"keep_alive_timeout"`
	KeepAliveMax     int           `yaml:"keep_alive_max"`
	// CloseAfterStream closes the connection after every streamed
	// response without saying so (no Connection: close; the Keep-Alive
	// header still promises reuse), as llama-server does: the response is
	// whole, then the socket closes. A client that reuses the connection at
	// once meets a closed one. Off unless set, in every dialect (the
	// llama.cpp dialect keeps only its Keep-Alive defaults); HTTP/1.x only.
	CloseAfterStream bool `yaml:"close_after_stream"`
	// IdleCloseOnReuse applies KeepAliveTimeout when the next request
	// arrives rather than on time: a chat or completions request on a
	// connection idle that long is not read, and the connection closes
	// without an answer byte, as with a server whose idle check loses the
	// race with the client's reuse. (Closed on time, as net/http does, an
	// idle connection is seldom met by a client: its pool notices first.)
	IdleCloseOnReuse bool `yaml:"idle_close_on_reuse"`

	// The GPU power model of the emulated DCGM exporter (engine/sim's
	// /dcgm/metrics; docs/decisions/1701): the GPUs draw IdleWatts each
	// all the time, plus PrefillJoulesPerToken for every prompt token a pass
	// computes (prefix-cache hits cost nothing) and DecodeJoulesPerToken for
	// every token it generates, shared equally between the GPUs. The
	// scheduler does not read them.
	GPUs                  int     `yaml:"gpus"` // 0 = 1
	GPUIdleWatts          float64 `yaml:"gpu_idle_watts"`
	PrefillJoulesPerToken float64 `yaml:"prefill_joules_per_token"`
	DecodeJoulesPerToken  float64 `yaml:"decode_joules_per_token"`
	// GPUMemoryMiB is each GPU's framebuffer; the engine holds
	// GPUMemoryUsedShare of it from the start (weights and the KV cache
	// reserved up front, as SGLang's and vLLM's memory fractions do).
	GPUMemoryMiB       int     `yaml:"gpu_memory_mib"`
	GPUMemoryUsedShare float64 `yaml:"gpu_memory_used_share"`
}

// Validate reports every invalid field at once.
func (p Params) Validate() error {
	var errs []error
	positive := func(name string, v int) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be > 0, got %d", name, v))
		}
	}
	nonNegative := func(name string, d time.Duration) {
		if d < 0 {
			errs = append(errs, fmt.Errorf("%s must be >= 0, got %v", name, d))
		}
	}
	positive("max_running_requests", p.MaxRunningRequests)
	positive("max_prefill_tokens", p.MaxPrefillTokens)
	positive("max_model_len", p.MaxModelLen)
	positive("kv_block_size", p.KVBlockSize)
	positive("kv_blocks", p.KVBlocks)
	positive("decode_log_interval", p.DecodeLogInterval)
	nonNegative("decode_base", p.DecodeBase)
	nonNegative("decode_per_seq", p.DecodePerSeq)
	nonNegative("decode_per_kv_token", p.DecodePerKVToken)
	nonNegative("prefill_overhead", p.PrefillOverhead)
	nonNegative("prefill_per_token", p.PrefillPerToken)
	nonNegative("spec_draft_cost", p.SpecDraftCost)
	if p.Jitter < 0 || p.Jitter > 1 {
		errs = append(errs, fmt.Errorf("jitter must be in [0, 1], got %g", p.Jitter))
	}
	if p.EOSMeanTokens < 0 {
		errs = append(errs, fmt.Errorf("eos_mean_tokens must be >= 0, got %d", p.EOSMeanTokens))
	}
	if p.SpecTokens < 0 || p.SpecTokens > 16 {
		errs = append(errs, fmt.Errorf("spec_tokens must be in [0, 16], got %d", p.SpecTokens))
	}
	if p.SpecAcceptRate < 0 || p.SpecAcceptRate > 1 {
		errs = append(errs, fmt.Errorf("spec_accept_rate must be in [0, 1], got %g", p.SpecAcceptRate))
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"chat_template_tokens", p.ChatTemplateTokens}, {"chat_template_message_tokens", p.ChatTemplateMessageTokens},
		{"reasoning_tokens", p.ReasoningTokens}, {"stream_interval", p.StreamInterval}, {"keep_alive_max", p.KeepAliveMax},
		{"embedding_dimensions", p.EmbeddingDimensions},
	} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%s must be >= 0, got %d", f.name, f.v))
		}
	}
	nonNegative("keep_alive_timeout", p.KeepAliveTimeout)
	errs = append(errs, p.validatePower()...)
	if p.ToolCallRate < 0 || p.ToolCallRate > 1 || p.ToolCallRate != p.ToolCallRate {
		errs = append(errs, fmt.Errorf("tool_call_rate must be in [0, 1], got %g", p.ToolCallRate))
	}
	if p.KVBlockSize > 0 && p.MaxModelLen > 0 && p.KVBlocks > 0 &&
		p.KVBlocks < blocksFor(p.MaxModelLen+1, p.KVBlockSize) {
		errs = append(errs, fmt.Errorf("kv_blocks (%d of %d tokens) cannot hold one max_model_len (%d) request",
			p.KVBlocks, p.KVBlockSize, p.MaxModelLen))
	}
	if p.DecodeBase+p.DecodePerSeq+p.DecodePerKVToken+p.PrefillOverhead+p.PrefillPerToken <= 0 {
		errs = append(errs, errors.New("the cost model is all zero: at least one of decode_base, decode_per_seq, decode_per_kv_token, prefill_overhead, prefill_per_token must be > 0"))
	}
	return errors.Join(errs...)
}

// KVCapacityTokens is the KV-cache capacity in tokens.
func (p Params) KVCapacityTokens() int { return p.KVBlocks * p.KVBlockSize }

func blocksFor(tokens, blockSize int) int { return (tokens + blockSize - 1) / blockSize }
