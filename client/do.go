package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/internal/httppolicy"
	"github.com/llmbench-org/llmbench/redact"
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

// call is one request in flight: the Record being filled and what sender
// needs to send it.
type call struct {
	c      *Client
	rec    *Record
	ctx    context.Context // the request's own context: Timeout and the caller's cancel
	id     string
	extras []byte        // JSON members appended to the marshalled body
	body   io.ReadCloser // the response body, set by sender
	callTrace

	streamed   bool   // a 2xx streamed response arrived and its body was read
	finish     []byte // raw JSON string of the first finish_reason
	usage      wireUsage
	hasUsage   bool
	completion int    // the last usage.completion_tokens seen
	allUsage   bool   // every output chunk so far carried usage
	timings    []byte // the last raw timings object, copied

	// stall is what the stall watchdog reads (stall.go).
	stall stallState
}

// Do sends r and returns what happened as one Record. It never fails: a
// failure is a Record with an ErrorClass, holding whatever arrived before it.
func (c *Client) Do(ctx context.Context, r Request) Record {
	rec := Record{ID: r.ID, Index: r.Index, Phase: r.Phase, Intended: r.Intended,
		TargetPromptTokens: r.PromptTokens, MaxTokens: r.MaxTokens, NoStream: c.cfg.NoStream}
	if r.MaxTokens > 0 && !c.cfg.NoStream {
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
	c.inflight.add(cl, cancel)
	defer c.inflight.remove(cl)

	err := c.post(reqCtx, cl, r)
	cl.stall.watch(cl)
	switch {
	case err != nil:
		cl.failOpen(err)
	case c.cfg.NoStream:
		cl.readWhole(cancel)
	default:
		cl.streamed = true
		cl.read(cancel)
	}
	if cl.body != nil {
		_ = cl.body.Close()
	}
	cl.copyTrace()
	cl.settle()
	cl.stall.explain(&rec)
	if rec.Error != "" {
		// The one place every message written into Error passes: the
		// server's words (a 401 echoing the Authorization header) among them.
		rec.Error = redact.Known(rec.Error, c.cfg.APIKey)
	}
	return rec
}

// chatBody and completionBody are the bodies the client marshals itself,
// every request's since decision 0207 (go-openai's own request types refuse
// max_tokens and /v1/completions for model names they take for OpenAI's, and
// have no place for the fields engines read): extras follow (Client.extras).
type chatBody struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	Stream   bool      `json:"stream"`
}

type completionBody struct {
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
	Stream bool   `json:"stream"`
}

// prompt is the completions prompt of r: its messages' contents, joined by
// newlines (no chat template: the engine sees exactly this text).
func prompt(r Request) string {
	parts := make([]string, len(r.Messages))
	for i, m := range r.Messages {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n")
}

// post sends r for cl (the body marshalled here, cl.extras appended) and
// leaves a 2xx response's body in cl. A non-2xx answer becomes a
// statusError.
func (c *Client) post(ctx context.Context, cl *call, r Request) error {
	var v any
	url := c.url
	if c.endpoint.Kind == endpoints.KindCompletion {
		v = completionBody{Model: c.cfg.Model, Prompt: prompt(r), Stream: !c.cfg.NoStream}
	} else { // endpoints.KindChat (New refuses any other kind)
		msgs := r.Messages
		if msgs == nil {
			msgs = []Message{}
		}
		v = chatBody{Model: c.cfg.Model, Messages: msgs, Stream: !c.cfg.NoStream}
	}
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("client: marshal request: %w", err)
	}
	if body, err = addMembers(body, cl.extras); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.cfg.NoStream {
		req.Header.Set("Accept", "application/json")
	} else {
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Cache-Control", "no-cache")
	}
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.sender.send(req, cl, body)
	if err != nil {
		return err
	}
	if httppolicy.IsRedirect(resp.StatusCode) {
		// Never followed (internal/httppolicy): named with its target, the
		// target's secrets removed.
		return &redirectError{code: resp.StatusCode, location: redact.URL(resp.Header.Get("Location"))}
	}
	if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusBadRequest {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, errBodyLimit))
		return &statusError{code: resp.StatusCode, msg: errorMessage(msg)}
	}
	return nil
}

// redirectError is a 3xx answer: the benchmark goes to the URL it was
// given, so a redirect is a failure that names where it pointed.
type redirectError struct {
	code     int
	location string
}

func (e *redirectError) Error() string {
	where := e.location
	if where == "" {
		where = "no Location"
	}
	return fmt.Sprintf("status %d %s: redirected to %s, not followed: point base_url at the engine itself", e.code, http.StatusText(e.code), where)
}

// errBodyLimit bounds the error body read from a non-2xx answer: a message
// is quoted at most 500 bytes long anyway.
const errBodyLimit = 64 << 10

// statusError is a non-2xx answer on the client's own path.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("status %d %s: %s", e.code, http.StatusText(e.code), e.msg)
}

// errorMessage is what a server said in an error body or event: the message
// of an OpenAI-style {"error": {"message": …}} (with its type and code), of
// {"error": "…"} (TGI), {"message": …} or {"detail": …} (FastAPI), or else
// the text itself, shortened. It runs once per failed request.
func errorMessage(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	var top struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if m := errorValue(raw); m != "" {
		return m
	}
	if json.Unmarshal(raw, &top) == nil {
		for _, r := range []json.RawMessage{top.Error, top.Message, top.Detail} {
			if m := errorValue(r); m != "" {
				return m
			}
		}
	}
	const max = 500
	if len(raw) > max {
		return strings.ToValidUTF8(string(raw[:max]), "\uFFFD") + "…"
	}
	return strings.ToValidUTF8(string(raw), "\uFFFD")
}

// errorValue reads one error value: a string, or an object with a message
// (and maybe a type and code). It returns "" for anything else.
func errorValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(raw, &obj) != nil || obj.Message == "" {
		return ""
	}
	var tags []string
	if obj.Type != "" {
		tags = append(tags, "type "+obj.Type)
	}
	if c := string(obj.Code); c != "" && c != "null" {
		tags = append(tags, "code "+strings.Trim(c, `"`))
	}
	if len(tags) == 0 {
		return obj.Message
	}
	return obj.Message + " (" + strings.Join(tags, ", ") + ")"
}

// extras renders the body members the marshalled request does not carry,
// each as `,"key":value`: stream_options (streamed requests only: include_usage
// merged with Config.ExtraBody's stream_options), max_tokens, min_tokens,
// ignore_eos, the dialect's id field, then every Config.ExtraBody member whose
// key the request does not set itself. max_tokens is here, not in
// ChatCompletionRequest: go-openai refuses MaxTokens for model names it takes
// for OpenAI reasoning models (o1…, gpt-5…), and llmbench must send
// max_tokens whatever the model is called (Ollama, for one, ignores
// max_completion_tokens).
func (c *Client) extras(r Request) []byte {
	b := make([]byte, 0, 96+c.extraLen)
	if c.streamOptions != nil {
		b = append(append(b, `,"stream_options":`...), c.streamOptions...)
	}
	if r.MaxTokens > 0 {
		b = strconv.AppendInt(append(b, `,"max_tokens":`...), int64(r.MaxTokens), 10)
	}
	if r.MinTokens > 0 {
		b = strconv.AppendInt(append(b, `,"min_tokens":`...), int64(r.MinTokens), 10)
	}
	if r.IgnoreEOS {
		b = append(b, `,"ignore_eos":true`...)
	}
	sendsID := c.idField != "" && r.ID != ""
	if sendsID {
		id, _ := json.Marshal(r.ID) // a string always marshals
		b = append(append(b, `,"`+c.idField+`":`...), id...)
	}
	for _, m := range c.extraBody {
		switch {
		case m.key == "max_tokens" && r.MaxTokens > 0,
			m.key == "min_tokens" && r.MinTokens > 0,
			m.key == "ignore_eos" && r.IgnoreEOS,
			m.key == c.idField && sendsID:
			continue
		}
		b = append(b, m.member...)
	}
	return b
}

// failOpen records a request that got no response body to read.
func (cl *call) failOpen(err error) {
	rec := cl.rec
	rec.End = cl.c.since()
	rec.Error = err.Error()
	switch {
	case httppolicy.IsRedirect(rec.Status):
		rec.ErrorClass = ErrRedirect
	case rec.Status != 0 && (rec.Status < http.StatusOK || rec.Status >= http.StatusBadRequest):
		rec.ErrorClass = ErrHTTPStatus
	case cl.ctx.Err() != nil:
		rec.ErrorClass = contextClass(cl.ctx)
	case rec.Status != 0:
		rec.ErrorClass = ErrStreamBroken
	default:
		rec.ErrorClass = ErrConnect
	}
}

// read consumes the stream. This is the per-chunk path: the time is taken as
// soon as a data line is read, and a chunk costs one decode into reused
// memory and, when it carries output, one append into preallocated space.
func (cl *call) read(cancel context.CancelCauseFunc) {
	rec := cl.rec
	sr := newSSEReader(cl.body)
	var dec chunkDecoder
	for {
		kind, data, err := sr.next()
		at := cl.c.since()
		if err != nil {
			rec.End = at
			if cl.tail(&dec, sr.tail, sr.tailKind, at, cancel) {
				return
			}
			cl.end(err)
			return
		}
		switch kind {
		case sseDone:
			rec.End = at
			cl.done(cancel)
			return
		case sseBare:
			// Not SSE: only a JSON error object means anything here.
			if v, err := dec.decode(data); err == nil && v.err != nil {
				rec.End = at
				cl.errorEvent(v.err, cancel)
				return
			}
			continue
		}
		v, err := dec.decode(data)
		if err != nil {
			rec.End = at
			rec.ErrorClass = ErrMalformedChunk
			rec.Error = fmt.Sprintf("chunk %d: %v: %.200q", len(rec.Chunks), err, data)
			return
		}
		if v.err != nil {
			rec.End = at
			cl.errorEvent(v.err, cancel)
			return
		}
		cl.take(&v, at)
	}
}

// take adds what a chunk said to the record.
func (cl *call) take(v *chunkView, at time.Duration) {
	rec := cl.rec
	if v.id != nil && rec.ServerID == "" {
		rec.ServerID = unquote(v.id)
	}
	if v.output() {
		rec.Chunks = append(rec.Chunks, Chunk{At: at, Tokens: cl.chunkTokens(v)})
		if rec.FirstToken == 0 {
			rec.FirstToken = at
		}
	}
	if v.content && rec.FirstContent == 0 {
		rec.FirstContent = at
	}
	if v.hasUsage {
		cl.usage, cl.hasUsage = *v.usage, true
		cl.completion = v.usage.CompletionTokens
	}
	if v.finish != nil && cl.finish == nil {
		cl.finish = append([]byte(nil), v.finish...)
	}
	if v.timings != nil {
		cl.timings = append(cl.timings[:0], v.timings...)
	}
}

// tail handles the last line of a body that ended without '\n' after it. A
// complete `data: [DONE]` is [DONE]; a data line that is valid JSON is whole
// (a JSON object cut short is never valid), so it is read as any chunk; a
// bare JSON line counts only as an error; a line cut mid-way is ignored, the
// stream being cut. It reports whether the record is settled.
func (cl *call) tail(dec *chunkDecoder, data []byte, kind sseKind, at time.Duration, cancel context.CancelCauseFunc) bool {
	if data == nil {
		return false
	}
	if kind == sseDone {
		cl.done(cancel)
		return true
	}
	v, err := dec.decode(data)
	if err != nil {
		return false
	}
	if v.err != nil {
		cl.errorEvent(v.err, cancel)
		return true
	}
	if kind == sseData {
		cl.take(&v, at)
	}
	return false
}

// chunkTokens is how many tokens an output chunk carried, as far as the
// chunk itself tells. A server that puts a running usage in every chunk
// (vLLM's continuous_usage_stats) tells it by the growth of
// completion_tokens; that is trusted only while every output chunk carried
// usage, so a usage that arrives only on the last output chunk is not taken
// for that chunk's own count. Otherwise a chunk is one token until settle
// spreads the final usage over the chunks.
func (cl *call) chunkTokens(v *chunkView) int32 {
	if !v.hasUsage {
		cl.allUsage = false
		return 1
	}
	if d := v.usage.CompletionTokens - cl.completion; cl.allUsage && d > 0 {
		return int32(min(d, math.MaxInt32))
	}
	return 1
}

// done ends a stream at [DONE]: a success when a finish_reason came.
func (cl *call) done(cancel context.CancelCauseFunc) {
	if cl.finish == nil {
		cl.rec.ErrorClass = ErrStreamBroken
		cl.rec.Error = fmt.Sprintf("stream ended with [DONE] but no finish_reason, after %d output chunks", len(cl.rec.Chunks))
		return
	}
	cl.drain(cancel)
}

// errorEvent ends a stream at a `data: {"error": …}` event (or a 2xx body
// holding an error object): a failure keeping the server's message and the
// chunks already received.
func (cl *call) errorEvent(raw []byte, cancel context.CancelCauseFunc) {
	rec := cl.rec
	rec.ErrorClass = ErrStreamBroken
	what := "response"
	if !rec.NoStream {
		what = "event"
	}
	rec.Error = fmt.Sprintf("server sent an error %s after %d output chunks: %s", what, len(rec.Chunks), errorMessage(raw))
	cl.drain(cancel)
}

// end classifies the error that ended the stream before [DONE]. A clean end
// of the body after a finish_reason is a success (some servers never send
// [DONE]); the record says NoDone.
func (cl *call) end(err error) {
	rec := cl.rec
	switch {
	case errors.Is(err, io.EOF) && cl.finish != nil:
		rec.NoDone = true
		return
	case cl.ctx.Err() != nil:
		rec.ErrorClass = contextClass(cl.ctx)
	case errors.Is(err, errTooManyEmptyLines), errors.Is(err, ErrSSELineTooLong):
		rec.ErrorClass = ErrMalformedChunk
	case errors.Is(err, io.EOF):
		rec.ErrorClass = ErrStreamBroken
		rec.Error = fmt.Sprintf("stream ended without [DONE] or a finish_reason after %d output chunks", len(rec.Chunks))
		return
	default:
		rec.ErrorClass = ErrStreamBroken
	}
	rec.Error = fmt.Sprintf("after %d output chunks: %v", len(rec.Chunks), err)
}

// maxBodyBytes bounds a non-streamed response (read through io.LimitReader):
// a longer one fails as malformed_chunk, "response longer than … bytes".
const maxBodyBytes = 64 << 20

// readWhole reads a non-streamed response: only its end (E2E) and usage are
// measured.
func (cl *call) readWhole(cancel context.CancelCauseFunc) {
	rec := cl.rec
	body, err := io.ReadAll(io.LimitReader(cl.body, maxBodyBytes+1))
	rec.End = cl.c.since()
	switch {
	case err != nil && cl.ctx.Err() != nil:
		rec.ErrorClass = contextClass(cl.ctx)
		rec.Error = fmt.Sprintf("reading the response: %v", err)
		return
	case err != nil:
		rec.ErrorClass = ErrStreamBroken
		rec.Error = fmt.Sprintf("reading the response: %v", err)
		return
	case len(body) > maxBodyBytes:
		rec.ErrorClass = ErrMalformedChunk
		rec.Error = fmt.Sprintf("response longer than %d bytes", maxBodyBytes)
		return
	}
	var dec chunkDecoder
	v, err := dec.decode(body)
	if err != nil {
		rec.ErrorClass = ErrMalformedChunk
		rec.Error = fmt.Sprintf("response: %v: %.200q", err, body)
		return
	}
	if v.err != nil {
		cl.errorEvent(v.err, cancel)
		return
	}
	cl.take(&v, rec.End)
	rec.Chunks, rec.FirstToken, rec.FirstContent = nil, 0, 0 // a whole response has no timeline
	if cl.finish == nil {
		rec.ErrorClass = ErrStreamBroken
		rec.Error = "response without a finish_reason"
	}
}

// drain reads what follows the end of a stream (usually only the chunked
// encoding's terminator) so that the connection goes back to the pool: Go
// closes a connection whose body was closed before its end. A server that
// keeps the stream open gets drainGrace, then the request is canceled; the
// Record is already complete by then.
func (cl *call) drain(cancel context.CancelCauseFunc) {
	t := time.AfterFunc(drainGrace, func() { cancel(errDrainTimeout) })
	defer t.Stop()
	_, _ = io.Copy(io.Discard, io.LimitReader(cl.body, drainLimit))
}

// settle fills the token counts, the chunks' token counts, the finish
// reason and the timings.
func (cl *call) settle() {
	rec := cl.rec
	if cl.finish != nil {
		rec.FinishReason = unquote(cl.finish)
	}
	if cl.timings != nil {
		var t Timings
		if err := json.Unmarshal(cl.timings, &t); err == nil || errors.As(err, new(*json.UnmarshalTypeError)) {
			rec.Timings = &t
		}
	}
	if cl.hasUsage {
		rec.PromptTokens = cl.usage.PromptTokens
		rec.OutputTokens = cl.usage.CompletionTokens
		rec.CachedTokens = cl.usage.PromptTokensDetails.CachedTokens
		rec.ReasoningTokens = cl.usage.CompletionTokensDetails.ReasoningTokens
		rec.TokenSource = TokensFromUsage
	}
	n := len(rec.Chunks)
	switch {
	case n == 0:
	case cl.hasUsage && cl.allUsage:
		rec.TokensPerChunkSource = ChunkTokensUsageGrowth
	case cl.hasUsage && cl.usage.CompletionTokens >= n:
		spreadTokens(rec.Chunks, cl.usage.CompletionTokens)
		rec.TokensPerChunkSource = ChunkTokensUsageTotal
	default:
		for i := range rec.Chunks {
			rec.Chunks[i].Tokens = 1
		}
		rec.TokensPerChunkSource = ChunkTokensChunks
	}
	if !cl.hasUsage && cl.streamed {
		rec.OutputTokens = n
		rec.TokenSource = TokensFromChunks
	}
}

// spreadTokens gives the chunks total tokens (total ≥ len(chunks)). The
// first chunk gets one: prefill makes exactly one token, and engines send it
// at once (vLLM's and SGLang's stream_interval and speculative drafts group
// decode steps, not the first token). The rest are spread as evenly as whole
// tokens allow: the first c of the later chunks hold round(c·rest/(n−1)).
func spreadTokens(chunks []Chunk, total int) {
	if len(chunks) == 1 {
		chunks[0].Tokens = int32(min(total, math.MaxInt32))
		return
	}
	chunks[0].Tokens = 1
	later := chunks[1:]
	n, rest := int64(len(later)), int64(total-1)
	prev := int64(0)
	for i := range later {
		upTo := ((int64(i)+1)*rest + n/2) / n
		later[i].Tokens = int32(min(upTo-prev, math.MaxInt32))
		prev = upTo
	}
}
