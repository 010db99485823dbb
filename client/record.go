// Package client sends one streaming chat request and turns what came back into
// one Record: the full timeline on the run clock, usage, and an error class.
// It never aggregates: a Record is the raw observation every report is built from.
package client

import "time"

// ErrorClass names why a request failed. The empty class means success.
type ErrorClass string

const (
	ErrNone           ErrorClass = ""
	ErrConnect        ErrorClass = "connect"         // no connection, or it broke before any response byte
	ErrHTTPStatus     ErrorClass = "http_status"     // the server answered with a non-2xx status
	ErrTimeout        ErrorClass = "timeout"         // the request's own deadline passed
	ErrStreamBroken   ErrorClass = "stream_broken"   // the stream ended early: closed mid-way, or no [DONE]
	ErrMalformedChunk ErrorClass = "malformed_chunk" // a data line that is not a valid chunk
	ErrCanceled       ErrorClass = "canceled"        // the run was stopped while the request was in flight
)

// TokenSource says where a Record's output token count came from.
type TokenSource string

const (
	TokensFromUsage  TokenSource = "usage"  // the server's usage object
	TokensFromChunks TokenSource = "chunks" // counted content chunks (one token each, or the chunk's own count)
)

// Chunk is one streamed chunk that carried generated content.
// At is its arrival on the run clock; Tokens is how many tokens it carried
// (1 unless the server said otherwise, e.g. speculative decoding).
type Chunk struct {
	At     time.Duration `json:"at_ns"`
	Tokens int32         `json:"tokens,omitempty"`
}

// Record is everything the client observed of one request. Every time is an
// offset from the run's single monotonic clock (time.Since(runStart)); a zero
// offset means "did not happen" (the run clock starts before any request).
type Record struct {
	ID       string `json:"id"`                  // the id llmbench sent (X-Request-Id and the dialect's body field)
	ServerID string `json:"server_id,omitempty"` // the id the server echoed in the chunks' "id"
	Index    int    `json:"index"`               // position in the plan
	Phase    string `json:"phase,omitempty"`

	Intended   time.Duration `json:"intended_ns"`              // when the plan wanted it sent
	Sent       time.Duration `json:"sent_ns"`                  // when the request was handed to the transport
	Wrote      time.Duration `json:"wrote_ns,omitempty"`       // when its last byte was written to the connection (0 when it never was)
	Connected  time.Duration `json:"connected_ns,omitempty"`   // when a new connection finished (0 when one was reused)
	ConnectDur time.Duration `json:"connect_dur_ns,omitempty"` // dial + handshake time of a new connection
	Reused     bool          `json:"reused"`                   // the request went out on a kept-alive connection
	FirstByte  time.Duration `json:"first_byte_ns,omitempty"`  // first response byte
	FirstToken time.Duration `json:"first_token_ns,omitempty"` // first chunk carrying generated content
	End        time.Duration `json:"end_ns"`                   // end of stream, or the moment of failure

	Chunks []Chunk `json:"chunks,omitempty"`

	// What the plan aimed for, kept beside what the server counted: the
	// dataset builds prompts for a tokenizer it does not have.
	TargetPromptTokens int `json:"target_prompt_tokens,omitempty"`
	MaxTokens          int `json:"max_tokens,omitempty"`

	PromptTokens int         `json:"prompt_tokens"`
	OutputTokens int         `json:"output_tokens"`
	CachedTokens int         `json:"cached_tokens,omitempty"`
	TokenSource  TokenSource `json:"token_source,omitempty"`
	FinishReason string      `json:"finish_reason,omitempty"`

	Status     int        `json:"status,omitempty"` // HTTP status, 0 when none arrived
	ErrorClass ErrorClass `json:"error_class,omitempty"`
	Error      string     `json:"error,omitempty"`
	Retries    int        `json:"retries,omitempty"` // resends after a kept-alive connection died before any response byte
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

// TTFT is the time from the actual send to the first content chunk; ok is
// false when no content arrived.
func (r *Record) TTFT() (d time.Duration, ok bool) {
	if r.FirstToken == 0 {
		return 0, false
	}
	return r.FirstToken - r.SentOnWire(), true
}

// E2E is the time from the actual send to the end of the stream.
func (r *Record) E2E() time.Duration { return r.End - r.SentOnWire() }

// ScheduleLag is how late the request went out compared with the plan.
func (r *Record) ScheduleLag() time.Duration { return r.Sent - r.Intended }

// TPOT is (E2E − TTFT) / (output_tokens − 1); ok is false with fewer than two tokens.
func (r *Record) TPOT() (d time.Duration, ok bool) {
	ttft, has := r.TTFT()
	if !has || r.OutputTokens < 2 {
		return 0, false
	}
	return (r.E2E() - ttft) / time.Duration(r.OutputTokens-1), true
}

// ITLs appends the inter-token latencies of the record to dst: the gap between
// consecutive content chunks, a chunk carrying k tokens counting as k tokens of gap/k each.
func (r *Record) ITLs(dst []time.Duration) []time.Duration {
	for i := 1; i < len(r.Chunks); i++ {
		gap := r.Chunks[i].At - r.Chunks[i-1].At
		k := int(r.Chunks[i].Tokens)
		if k < 1 {
			k = 1
		}
		per := gap / time.Duration(k)
		for j := 0; j < k; j++ {
			dst = append(dst, per)
		}
	}
	return dst
}
