// Package client sends one request (a chat or completions request, streamed
// or not) and turns what came back into one Record: the full timeline on the
// run clock, usage, and an error class.
// It never aggregates: a Record is the raw observation every report is built from.
package client

import "time"

// ErrorClass names why a request failed. The empty class means success.
type ErrorClass string

const (
	ErrNone           ErrorClass = ""
	ErrConnect        ErrorClass = "connect"         // no connection, or it broke before any response byte
	ErrHTTPStatus     ErrorClass = "http_status"     // the server answered with a non-2xx status
	ErrRedirect       ErrorClass = "redirect"        // the server answered 3xx: not followed (the API key would go to its target)
	ErrTimeout        ErrorClass = "timeout"         // the request's own deadline passed
	ErrStalled        ErrorClass = "stalled"         // nothing arrived from the server for the stall time (Client.WatchStalls)
	ErrStreamBroken   ErrorClass = "stream_broken"   // the stream ended early (cut before a finish_reason), or the server sent an error event
	ErrMalformedChunk ErrorClass = "malformed_chunk" // a data line that is not a valid chunk
	ErrCanceled       ErrorClass = "canceled"        // the run was stopped while the request was in flight
	// ErrContentEncoding: the body came in a content coding llmbench cannot
	// decode (named in Error), or compressed without saying so.
	ErrContentEncoding ErrorClass = "content_encoding"
)

// FailureClasses are the classes of a failed request, in the order outputs
// list them (ErrCanceled is not a failure: the run stopped it).
func FailureClasses() []ErrorClass {
	return []ErrorClass{ErrConnect, ErrHTTPStatus, ErrRedirect, ErrTimeout, ErrStalled, ErrStreamBroken, ErrMalformedChunk, ErrContentEncoding}
}

// TokenSource says where a Record's output token count came from.
type TokenSource string

const (
	TokensFromUsage  TokenSource = "usage"  // the server's usage object
	TokensFromChunks TokenSource = "chunks" // counted content chunks (one token each, or the chunk's own count)
)

// ChunkTokenSource says where the chunks' token counts (Chunk.Tokens) came
// from.
type ChunkTokenSource string

const (
	// ChunkTokensUsageGrowth: every output chunk carried a running usage
	// (vLLM's continuous_usage_stats); each chunk's count is the growth of
	// completion_tokens. Exact.
	ChunkTokensUsageGrowth ChunkTokenSource = "usage_growth"
	// ChunkTokensUsageTotal: only a final usage; the first chunk is given
	// one token (prefill makes one, sent at once) and the rest of
	// completion_tokens are spread as evenly as whole tokens allow over the
	// later chunks (an estimate: a chunk of two tokens may sit anywhere).
	ChunkTokensUsageTotal ChunkTokenSource = "usage_total"
	// ChunkTokensChunks: no usage, or fewer tokens than chunks: one token
	// per chunk.
	ChunkTokensChunks ChunkTokenSource = "chunks"
)

// Violation names a way a response broke the protocol that the client
// flagged rather than used (docs/decisions/0212-protocol-violations.md).
// A record lists each kind once, in the order Violations lists them.
type Violation string

const (
	// ViolationChunkAfterFinish: a choice carried output after its
	// finish_reason; that output is not part of the timeline.
	ViolationChunkAfterFinish Violation = "chunk_after_finish"
	// ViolationChoiceIndex: a choice's index was not an integer in [0, n)
	// for the n choices asked for (1 unless the body sets n); not used.
	ViolationChoiceIndex Violation = "choice_index"
	// ViolationUsageInvalid: a token count was not an integer that fits
	// (a fraction, an exponent, a string).
	ViolationUsageInvalid Violation = "usage_invalid"
	// ViolationUsageNegative: a token count below zero.
	ViolationUsageNegative Violation = "usage_negative"
	// ViolationUsageBackwards: completion_tokens (or prompt_tokens) of a
	// running usage went down from one chunk to a later one.
	ViolationUsageBackwards Violation = "usage_backwards"
	// ViolationUsageBeyondCap: a count beyond what the request allows
	// (client.UsageCaps): completion tokens over max_tokens × choices ×
	// 4 + 64, prompt tokens over the request body's bytes + 8192, cached
	// over prompt, reasoning over completion.
	ViolationUsageBeyondCap Violation = "usage_beyond_cap"
)

// Violations lists every kind, in the order outputs list them.
func Violations() []Violation {
	return []Violation{ViolationChunkAfterFinish, ViolationChoiceIndex, ViolationUsageInvalid,
		ViolationUsageNegative, ViolationUsageBackwards, ViolationUsageBeyondCap}
}

// Timings is llama.cpp's own account of a request, from the `timings` object
// of its last chunk or of a non-streamed response (server-side times, in
// milliseconds).
type Timings struct {
	CacheN              int     `json:"cache_n,omitempty"`   // prompt tokens reused from the cache
	PromptN             int     `json:"prompt_n,omitempty"`  // prompt tokens processed
	PromptMS            float64 `json:"prompt_ms,omitempty"` // prefill time
	PromptPerTokenMS    float64 `json:"prompt_per_token_ms,omitempty"`
	PromptPerSecond     float64 `json:"prompt_per_second,omitempty"`
	PredictedN          int     `json:"predicted_n,omitempty"`  // tokens generated
	PredictedMS         float64 `json:"predicted_ms,omitempty"` // decode time
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms,omitempty"`
	PredictedPerSecond  float64 `json:"predicted_per_second,omitempty"`
	DraftN              int     `json:"draft_n,omitempty"`          // speculative decoding: tokens drafted
	DraftNAccepted      int     `json:"draft_n_accepted,omitempty"` // and accepted
}

// Chunk is one streamed chunk that carried generated output (content,
// reasoning or a tool call). At is its arrival on the run clock; Tokens is
// how many tokens it carried: see Record.TokensPerChunkSource (0 in old
// records means 1). Choice is the choice it belongs to (n > 1; a chunk
// carrying two choices is two Chunks at the same time): each choice is its
// own sequence of tokens.
type Chunk struct {
	At     time.Duration `json:"at_ns"`
	Tokens int32         `json:"tokens,omitempty"`
	Choice int32         `json:"choice,omitempty"`
}

// Record is everything the client observed of one request. Every time is an
// offset from the run's single monotonic clock (time.Since(runStart)); a zero
// offset means "did not happen" (the run clock starts before any request).
type Record struct {
	ID       string `json:"id"`                  // the id llmbench sent (X-Request-Id and the dialect's body field)
	ServerID string `json:"server_id,omitempty"` // the id the server echoed in the chunks' "id"
	Index    int    `json:"index"`               // position in the plan
	Phase    string `json:"phase,omitempty"`
	Session  string `json:"session,omitempty"` // the agentic session the request belongs to (Request.Session)
	// TraceID is the W3C trace id the request's traceparent carried (32 hex
	// digits; traceparent.go): an engine's spans join the record by it.
	TraceID string `json:"trace_id,omitempty"`

	Intended   time.Duration `json:"intended_ns"`              // when the plan wanted it sent
	Sent       time.Duration `json:"sent_ns"`                  // when the request was handed to the transport
	Wrote      time.Duration `json:"wrote_ns,omitempty"`       // when its last byte was written to the connection (0 when it never was)
	Connected  time.Duration `json:"connected_ns,omitempty"`   // when a new connection finished (0 when one was reused)
	ConnectDur time.Duration `json:"connect_dur_ns,omitempty"` // dial + handshake time of a new connection
	Reused     bool          `json:"reused"`                   // the request went out on a kept-alive connection
	FirstByte  time.Duration `json:"first_byte_ns,omitempty"`  // first response byte
	FirstToken time.Duration `json:"first_token_ns,omitempty"` // first chunk carrying generated output: content, reasoning or a tool call
	End        time.Duration `json:"end_ns"`                   // end of stream, or the moment of failure
	// FirstContent is the first chunk carrying content proper (not
	// reasoning, not a tool call); 0 when none came (or in records written
	// before it existed).
	FirstContent time.Duration `json:"first_content_ns,omitempty"`

	Chunks []Chunk `json:"chunks,omitempty"`
	// TokensPerChunkSource says where Chunks' token counts came from; empty
	// without chunks (and in older records: one token per chunk unless the
	// chunk says otherwise).
	TokensPerChunkSource ChunkTokenSource `json:"tokens_per_chunk_source,omitempty"`

	// What the plan aimed for, kept beside what the server counted: the
	// dataset builds prompts for a tokenizer it does not have.
	TargetPromptTokens int `json:"target_prompt_tokens,omitempty"`
	MaxTokens          int `json:"max_tokens,omitempty"`
	// Images is how many images the request carried (their tokens are in
	// PromptTokens, as the engine counted them).
	Images int `json:"images,omitempty"`

	PromptTokens int         `json:"prompt_tokens"`
	OutputTokens int         `json:"output_tokens"`
	CachedTokens int         `json:"cached_tokens,omitempty"`
	TokenSource  TokenSource `json:"token_source,omitempty"`
	FinishReason string      `json:"finish_reason,omitempty"`

	Status     int        `json:"status,omitempty"` // HTTP status, 0 when none arrived
	ErrorClass ErrorClass `json:"error_class,omitempty"`
	Error      string     `json:"error,omitempty"`
	Retries    int        `json:"retries,omitempty"` // resends after a kept-alive connection died before any response byte
	// RetryIdle is how long the last kept-alive connection that proved dead
	// (Retries > 0) had sat idle in the pool before this request took it:
	// about 0 when the engine closed it right after the previous response
	// (llama-server after every stream), about the engine's keep-alive
	// timeout when it closed an idle connection just as it was reused.
	RetryIdle time.Duration `json:"retry_idle_ns,omitempty"`
	// ConnClose: the response said Connection: close (the engine closes the
	// connection after it: after every response, or at its keep-alive max).
	ConnClose bool `json:"conn_close,omitempty"`

	ReasoningTokens int      `json:"reasoning_tokens,omitempty"` // usage.completion_tokens_details.reasoning_tokens (part of OutputTokens)
	Timings         *Timings `json:"timings,omitempty"`          // llama.cpp's timings, when the server sent them
	// NoDone: the stream ended cleanly after a finish_reason but without
	// `data: [DONE]`; it counts as a success.
	NoDone bool `json:"no_done,omitempty"`
	// NoStream: the request was sent with stream:false (Config.NoStream):
	// only E2E and usage were measured, there is no TTFT, ITL or chunk.
	NoStream bool `json:"no_stream,omitempty"`
	// Wire says how the response travelled when it was not plain identity
	// SSE ending with its body, in words separated by spaces: the content
	// coding it came in although identity was asked for ("gzip", "deflate",
	// "deflate-raw", "br", layers joined by "+"), and "linger" when the
	// connection stayed open past the end of the stream for longer than the
	// grace the client gives it (the record still ends at the last event).
	// See decisions 0210 and 0211.
	Wire string `json:"wire,omitempty"`
	// Choices is how many choices carried output when more than one did
	// (the body asked for n > 1): TTFT is the first output of any, ITL is
	// per choice, token counts are their sum. 0 means one.
	Choices int `json:"choices,omitempty"`
	// Violations are the protocol violations the response committed, each
	// kind once: what they concern was not used (see Violation).
	Violations []Violation `json:"violations,omitempty"`
	// Endpoint is the endpoint the request went to (package endpoints),
	// empty for the default (chat), as in records written before it.
	Endpoint string `json:"endpoint,omitempty"`
	// Inputs is how many inputs a pooling request carried (embeddings'
	// inputs, rerank's documents), set exactly on those: they generate
	// nothing, so TTFT, TTFC, ITL and TPOT do not apply to them (Pooling),
	// and their latency is E2E. Results is how many of them the answer
	// gave back (vectors; rerank results, fewer with top_n).
	Inputs  int `json:"inputs,omitempty"`
	Results int `json:"results,omitempty"`
}

// Pooling reports whether the request went to a pooling endpoint
// (embeddings, rerank): no output, no token timeline; latency is E2E.
func (r *Record) Pooling() bool { return r.Inputs > 0 }

// HasViolation reports whether the record lists v.
func (r *Record) HasViolation(v Violation) bool {
	for _, x := range r.Violations {
		if x == v {
			return true
		}
	}
	return false
}

// OK reports whether the request succeeded.
func (r *Record) OK() bool { return r.ErrorClass == ErrNone }

// SentOnWire is when the request actually went out: when its last byte was
// written to the connection, or, when that is unknown, when it was handed to
// the transport. Latencies count from here; the time before it (waiting for a
// pooled connection, dialing, the client's own CPU) is the client's send
// delay, reported apart (SendDelay).
func (r *Record) SentOnWire() time.Duration {
	if r.Wrote > 0 {
		return r.Wrote
	}
	return r.Sent
}

// SendDelay is the time from handing the request to the transport to its
// last byte on the wire: connection wait and set-up, and request writing.
func (r *Record) SendDelay() time.Duration { return r.SentOnWire() - r.Sent }

// TTFT is the time from the actual send to the first chunk of generated
// output (content, reasoning or a tool call); ok is false when none arrived.
func (r *Record) TTFT() (d time.Duration, ok bool) {
	if r.FirstToken == 0 {
		return 0, false
	}
	return r.FirstToken - r.SentOnWire(), true
}

// TTFC is the time from the actual send to the first chunk of content proper;
// it differs from TTFT when a model reasons (or calls a tool) first. ok is
// false when no content arrived.
func (r *Record) TTFC() (d time.Duration, ok bool) {
	if r.FirstContent == 0 {
		return 0, false
	}
	return r.FirstContent - r.SentOnWire(), true
}

// E2E is the time from the actual send to the end of the stream.
func (r *Record) E2E() time.Duration { return r.End - r.SentOnWire() }

// Scheduled reports whether the request had an intended send time: an
// open-loop arrival. A closed-loop request (Intended 0) goes when a user is
// free, so it has no schedule to lag behind.
func (r *Record) Scheduled() bool { return r.Intended > 0 }

// ScheduleLag is how late the request went out compared with the plan; 0 for
// a closed-loop request (see Scheduled), whose Sent − Intended would be its
// send time on the run clock, not a lag (issue 20: 949 s of "lag" over 207
// closed-loop requests). Consumers that count lag samples count only
// Scheduled records, so every output agrees (summary, live view, gates,
// --metrics-addr, parquet).
func (r *Record) ScheduleLag() time.Duration {
	if !r.Scheduled() {
		return 0
	}
	return r.Sent - r.Intended
}

// TPOT is (E2E − TTFT) / (output_tokens − 1), output_tokens per choice
// when there are several; ok is false with fewer than two tokens.
func (r *Record) TPOT() (d time.Duration, ok bool) {
	ttft, has := r.TTFT()
	out := r.OutputTokens / max(r.Choices, 1)
	if !has || out < 2 {
		return 0, false
	}
	return (r.E2E() - ttft) / time.Duration(out-1), true
}

// ITLs appends the record's per-token inter-token latencies to dst: a chunk
// carrying k tokens (Chunk.Tokens, see TokensPerChunkSource) that came a gap
// g after the previous output chunk of its choice contributes k latencies
// of g/k; the first chunk of each choice contributes none. With one token
// per chunk and one choice these are the gaps between consecutive chunks.
func (r *Record) ITLs(dst []time.Duration) []time.Duration {
	if r.Choices > 1 {
		return r.choiceITLs(dst)
	}
	for i := 1; i < len(r.Chunks); i++ {
		dst = appendITLs(dst, r.Chunks[i].At-r.Chunks[i-1].At, r.Chunks[i].Tokens)
	}
	return dst
}

func appendITLs(dst []time.Duration, gap time.Duration, tokens int32) []time.Duration {
	k := max(int(tokens), 1)
	per := gap / time.Duration(k)
	for j := 0; j < k; j++ {
		dst = append(dst, per)
	}
	return dst
}

// choiceITLs is ITLs with each choice's chunks a sequence of their own.
func (r *Record) choiceITLs(dst []time.Duration) []time.Duration {
	var prev [maxChoices]time.Duration
	var seen uint64
	for _, ch := range r.Chunks {
		c := uint(ch.Choice) % maxChoices
		if seen&(1<<c) != 0 {
			dst = appendITLs(dst, ch.At-prev[c], ch.Tokens)
		}
		seen |= 1 << c
		prev[c] = ch.At
	}
	return dst
}

// MeanITL is the mean of the record's ITLs (ITLs, the one definition of
// an inter-token latency) without building them: the chunks' span over the
// tokens after the first chunk (each choice's span over its tokens after
// its first, summed, with several choices). ok is false when no choice has
// two chunks. The live view's ITL is a quantile of these per-request means,
// and named so ("ITL per-req mean"); the summary's is over every ITL.
func (r *Record) MeanITL() (d time.Duration, ok bool) {
	if n := len(r.Chunks); r.Choices <= 1 && n >= 2 {
		tokens := 0
		for _, ch := range r.Chunks[1:] {
			tokens += int(max(ch.Tokens, 1))
		}
		return (r.Chunks[n-1].At - r.Chunks[0].At) / time.Duration(tokens), true
	}
	var first, last [maxChoices]time.Duration
	var seen uint64
	tokens := 0
	for _, ch := range r.Chunks {
		c := uint(ch.Choice) % maxChoices
		if seen&(1<<c) == 0 {
			seen |= 1 << c
			first[c] = ch.At
		} else {
			tokens += int(max(ch.Tokens, 1))
		}
		last[c] = ch.At
	}
	if tokens == 0 {
		return 0, false
	}
	var span time.Duration
	for c := range maxChoices {
		span += last[c] - first[c]
	}
	return span / time.Duration(tokens), true
}

// TokensPerChunk is the mean number of tokens an output chunk carried (the
// chunks' token counts over the chunks): 1 when every chunk is one token,
// more with speculative decoding or coalesced deltas. ok is false without
// chunks.
func (r *Record) TokensPerChunk() (float64, bool) {
	if len(r.Chunks) == 0 {
		return 0, false
	}
	n := 0
	for _, ch := range r.Chunks {
		n += int(max(ch.Tokens, 1))
	}
	return float64(n) / float64(len(r.Chunks)), true
}
