package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

const (
	// maxChunkPrealloc caps the chunk slice allocated up front from MaxTokens,
	// so that appending on the per-chunk path does not grow it.
	maxChunkPrealloc = 8192
	// drainGrace and drainLimit bound reading the body's tail after [DONE]:
	// reading it to the end is what hands the connection back to the pool.
	drainGrace = time.Second
	drainLimit = 64 << 10
)

// call is one request in flight: the Record being filled and what extrasDoer
// needs to send it.
type call struct {
	c      *Client
	rec    *Record
	ctx    context.Context // the request's own context: Timeout and the caller's cancel
	id     string
	extras []byte   // JSON members appended to go-openai's body
	body   *sseBody // the response body, set by extrasDoer
	callTrace

	streamed   bool   // a 2xx response arrived and the stream was read
	finish     []byte // raw JSON string of the first finish_reason
	usage      wireUsage
	hasUsage   bool
	completion int  // the last usage.completion_tokens seen
	allUsage   bool // every content chunk so far carried usage
}

// Do sends r and returns what happened as one Record. It never fails: a
// failure is a Record with an ErrorClass, holding whatever arrived before it.
func (c *Client) Do(ctx context.Context, r Request) Record {
	rec := Record{ID: r.ID, Index: r.Index, Phase: r.Phase, Intended: r.Intended,
		TargetPromptTokens: r.PromptTokens, MaxTokens: r.MaxTokens}
	if r.MaxTokens > 0 {
		rec.Chunks = make([]Chunk, 0, min(r.MaxTokens, maxChunkPrealloc))
	}
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if c.cfg.Timeout > 0 {
		var stop context.CancelFunc
		reqCtx, stop = context.WithTimeoutCause(reqCtx, c.cfg.Timeout, errRequestTimeout)
		defer stop()
	}
	cl := &call{c: c, rec: &rec, ctx: reqCtx, id: r.ID, extras: c.extras(r), allUsage: true}

	stream, err := c.api.CreateChatCompletionStream(context.WithValue(reqCtx, callKey{}, cl), c.chatRequest(r))
	if err != nil {
		cl.failOpen(err)
	} else {
		cl.streamed = true
		cl.read(stream, cancel)
	}
	if cl.body != nil {
		_ = cl.body.Close()
	}
	cl.copyTrace()
	cl.settle()
	return rec
}

// chatRequest is the part of the request go-openai knows how to express.
// max_tokens is not among it: see extras.
func (c *Client) chatRequest(r Request) openai.ChatCompletionRequest {
	msgs := make([]openai.ChatCompletionMessage, len(r.Messages))
	for i, m := range r.Messages {
		msgs[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
	}
	req := openai.ChatCompletionRequest{Model: c.cfg.Model, Messages: msgs, Stream: true}
	if c.cfg.IncludeUsage {
		req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	return req
}

// extras renders the body members go-openai cannot carry, each as
// `,"key":value`. max_tokens is here too, not in ChatCompletionRequest:
// go-openai refuses MaxTokens for model names it takes for OpenAI reasoning
// models (o1…, gpt-5…), and llmbench must send max_tokens whatever the model
// is called (Ollama, for one, ignores max_completion_tokens).
func (c *Client) extras(r Request) []byte {
	b := make([]byte, 0, 96)
	if r.MaxTokens > 0 {
		b = strconv.AppendInt(append(b, `,"max_tokens":`...), int64(r.MaxTokens), 10)
	}
	if r.MinTokens > 0 {
		b = strconv.AppendInt(append(b, `,"min_tokens":`...), int64(r.MinTokens), 10)
	}
	if r.IgnoreEOS {
		b = append(b, `,"ignore_eos":true`...)
	}
	if c.idField != "" && r.ID != "" {
		id, _ := json.Marshal(r.ID) // a string always marshals
		b = append(append(b, `,"`+c.idField+`":`...), id...)
	}
	return b
}

// failOpen records a request that got no stream.
func (cl *call) failOpen(err error) {
	rec := cl.rec
	rec.End = cl.c.since()
	rec.Error = err.Error()
	switch {
	case rec.Status != 0:
		rec.ErrorClass = ErrHTTPStatus
	case cl.ctx.Err() != nil:
		rec.ErrorClass = contextClass(cl.ctx)
	default:
		rec.ErrorClass = ErrConnect
	}
}

// read consumes the stream. This is the per-chunk path: the time is taken as
// soon as RecvRaw returns, and a chunk costs one decode into reused memory
// and, when it carries content, one append into preallocated space.
func (cl *call) read(stream *openai.ChatCompletionStream, cancel context.CancelCauseFunc) {
	rec := cl.rec
	var dec chunkDecoder
	for {
		data, err := stream.RecvRaw()
		at := cl.c.since()
		if err != nil {
			rec.End = at
			cl.end(err, cancel)
			return
		}
		v, err := dec.decode(data)
		if err != nil {
			rec.End = at
			rec.ErrorClass = ErrMalformedChunk
			rec.Error = fmt.Sprintf("chunk %d: %v: %.200q", len(rec.Chunks), err, data)
			return
		}
		if v.id != nil && rec.ServerID == "" {
			rec.ServerID = unquote(v.id)
		}
		if v.content {
			rec.Chunks = append(rec.Chunks, Chunk{At: at, Tokens: cl.chunkTokens(v)})
			if rec.FirstToken == 0 {
				rec.FirstToken = at
			}
		}
		if v.hasUsage {
			cl.usage, cl.hasUsage = *v.usage, true
			cl.completion = v.usage.CompletionTokens
		}
		if v.finish != nil && cl.finish == nil {
			cl.finish = append([]byte(nil), v.finish...)
		}
	}
}

// chunkTokens is how many tokens a content chunk carried. A server that puts
// a running usage in every chunk (vLLM's continuous_usage_stats) tells it by
// the growth of completion_tokens; that is trusted only while every content
// chunk carried usage, so a usage that arrives only on the last content chunk
// is not taken for that chunk's own count. Otherwise a chunk is one token.
func (cl *call) chunkTokens(v chunkView) int32 {
	if !v.hasUsage {
		cl.allUsage = false
		return 1
	}
	if d := v.usage.CompletionTokens - cl.completion; cl.allUsage && d > 0 {
		return int32(d)
	}
	return 1
}

// end classifies the error that ended the stream. io.EOF is a success only
// after a [DONE] line and a finish_reason.
func (cl *call) end(err error, cancel context.CancelCauseFunc) {
	rec := cl.rec
	done := cl.body != nil && cl.body.done()
	var apiErr *openai.APIError
	switch {
	case errors.Is(err, io.EOF) && done && cl.finish != nil:
		cl.drain(cancel)
		return
	case errors.Is(err, io.EOF) && done:
		rec.ErrorClass = ErrStreamBroken
		rec.Error = fmt.Sprintf("stream ended with [DONE] but no finish_reason, after %d content chunks", len(rec.Chunks))
		return
	case cl.ctx.Err() != nil:
		rec.ErrorClass = contextClass(cl.ctx)
	case errors.Is(err, openai.ErrTooManyEmptyStreamMessages):
		rec.ErrorClass = ErrMalformedChunk
	case errors.As(err, &apiErr):
		// go-openai turns a `data: {"error": …}` event into an error.
		rec.ErrorClass = ErrStreamBroken
		rec.Error = fmt.Sprintf("server sent an error event after %d content chunks: %v", len(rec.Chunks), err)
		return
	case errors.Is(err, io.EOF):
		rec.ErrorClass = ErrStreamBroken
		rec.Error = fmt.Sprintf("stream ended without [DONE] after %d content chunks", len(rec.Chunks))
		return
	default:
		rec.ErrorClass = ErrStreamBroken
	}
	rec.Error = fmt.Sprintf("after %d content chunks: %v", len(rec.Chunks), err)
}

// drain reads what follows [DONE] (usually only the chunked encoding's
// terminator) so that the connection goes back to the pool: Go closes a
// connection whose body was closed before its end. A server that keeps the
// stream open after [DONE] gets drainGrace, then the request is canceled;
// the Record is already complete by then.
func (cl *call) drain(cancel context.CancelCauseFunc) {
	t := time.AfterFunc(drainGrace, func() { cancel(errDrainTimeout) })
	defer t.Stop()
	_, _ = io.Copy(io.Discard, io.LimitReader(cl.body.rc, drainLimit))
}

// settle fills the token counts and the finish reason.
func (cl *call) settle() {
	rec := cl.rec
	if cl.finish != nil {
		rec.FinishReason = unquote(cl.finish)
	}
	switch {
	case cl.hasUsage:
		rec.PromptTokens = cl.usage.PromptTokens
		rec.OutputTokens = cl.usage.CompletionTokens
		rec.CachedTokens = cl.usage.PromptTokensDetails.CachedTokens
		rec.TokenSource = TokensFromUsage
	case cl.streamed:
		n := 0
		for _, ch := range rec.Chunks {
			n += int(max(ch.Tokens, 1))
		}
		rec.OutputTokens = n
		rec.TokenSource = TokensFromChunks
	}
}
