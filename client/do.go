package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
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
	// lingerGrace is how long a stream without [DONE] may stay silent after
	// a finish_reason before it is taken as ended (decision 0211): the
	// usage chunk that may follow comes from the same engine step.
	lingerGrace = time.Second
)

// errLinger is the cause used when a stream without [DONE] stays open
// lingerGrace after its last event, a finish_reason seen.
var errLinger = errors.New("stream open past its last event")

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

	raw       io.ReadCloser  // the body as it came, when body decodes a content coding
	decoders  []*lazyDecoder // those decoders
	lastAt    time.Duration  // the last event that carried a chunk
	linger    *time.Timer    // armLinger's
	lingered  bool           // the body stayed open past the stream's end (Wire "linger")
	others    int            // events of other types than message and error
	otherType string         // the first of them
	claims                   // choices, violations and the usage caps (claims.go)
	resp      respState      // a Responses stream's (responses.go)
	// stall is what the stall watchdog reads (stall.go).
	stall stallState
	reply replyKeeper // the response's data lines, when its reply is wanted (reply.go)
}

// Do sends r and returns what happened as one Record. It never fails: a
// failure is a Record with an ErrorClass, holding whatever arrived before it.
func (c *Client) Do(ctx context.Context, r Request) Record {
	rec, _ := c.do(ctx, r, false)
	return rec
}

// do is Do, keeping the engine's reply when keepReply (DoReply).
func (c *Client) do(ctx context.Context, r Request, keepReply bool) (Record, *Reply) {
	rec := Record{ID: r.ID, Index: r.Index, Phase: r.Phase, Session: r.Session, Intended: r.Intended,
		TargetPromptTokens: r.PromptTokens, MaxTokens: r.MaxTokens, NoStream: c.cfg.NoStream, Endpoint: c.recordEndpoint(),
		Images: countImages(r.Messages)}
	if r.MaxTokens > 0 && !c.whole() {
		rec.Chunks = make([]Chunk, 0, min(r.MaxTokens*max(c.choices, 1), maxChunkPrealloc))
	}
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if c.cfg.Timeout > 0 {
		var stop context.CancelFunc
		reqCtx, stop = context.WithTimeoutCause(reqCtx, c.cfg.Timeout, errRequestTimeout)
		defer stop()
	}
	cl := &call{c: c, rec: &rec, ctx: reqCtx, id: r.ID, extras: c.extras(r), allUsage: true}
	cl.choices = max(c.choices, 1)
	cl.reply.want(keepReply, r.MaxTokens)
	cl.capCompletion, cl.capPrompt = UsageCaps(max(r.MaxTokens, c.extraMaxTokens), cl.choices, 0)
	c.inflight.add(cl, cancel)
	defer c.inflight.remove(cl)

	err := c.post(reqCtx, cl, r)
	cl.stall.watch(cl)
	switch {
	case err != nil:
		cl.failOpen(err)
	case c.whole():
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
	return rec, cl.reply.message(&rec)
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
	url := c.url
	var body []byte
	var err error
	switch c.endpoint.Kind {
	case endpoints.KindEmbeddings, endpoints.KindRerank:
		body, cl.rec.Inputs, err = c.poolingBody(r) // pooling.go
	case endpoints.KindCompletion:
		body, err = json.Marshal(completionBody{Model: c.cfg.Model, Prompt: prompt(r), Stream: !c.cfg.NoStream})
	case endpoints.KindResponses:
		body, err = json.Marshal(newResponsesBody(c.cfg.Model, r, !c.cfg.NoStream)) // responses.go
	case endpoints.KindMessages:
		body, err = json.Marshal(newMessagesBody(c.cfg.Model, r, !c.cfg.NoStream)) // messages.go
	default: // endpoints.KindChat (New refuses any other kind)
		msgs := r.Messages
		if msgs == nil {
			msgs = []Message{}
		}
		body, err = json.Marshal(withImageParts(chatBody{Model: c.cfg.Model, Messages: msgs, Stream: !c.cfg.NoStream})) // images.go
	}
	if err != nil {
		return fmt.Errorf("client: marshal request: %w", err)
	}
	if body, err = addMembers(body, cl.extras); err != nil {
		return err
	}
	_, cl.capPrompt = UsageCaps(0, 1, len(body))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	c.setSessionHeaders(req.Header, r.Session)
	// Said, not left out: no Accept-Encoding means any coding will do
	// (encoding.go).
	req.Header.Set("Accept-Encoding", "identity")
	if c.whole() {
		req.Header.Set("Accept", "application/json")
	} else {
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Cache-Control", "no-cache")
	}
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	if c.endpoint.Kind == endpoints.KindMessages {
		SetMessagesHeaders(req, c.cfg.APIKey)
	}
	c.setTraceparent(req.Header, cl.rec) // traceparent.go
	resp, err := c.sender.send(req, cl, body)
	if err != nil {
		return err
	}
	if httppolicy.IsRedirect(resp.StatusCode) {
		// Never followed (internal/httppolicy): named with its target, the
		// target's secrets removed.
		return &redirectError{code: resp.StatusCode, location: redact.URL(resp.Header.Get("Location"))}
	}
	encErr := cl.decode(resp.Header)
	if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusBadRequest {
		if encErr != nil {
			return &statusError{code: resp.StatusCode, msg: encErr.Error()}
		}
		msg, _ := io.ReadAll(io.LimitReader(cl.body, errBodyLimit))
		return &statusError{code: resp.StatusCode, msg: errorMessage(msg)}
	}
	return encErr
}

// decode puts the decoders of the response's content codings in front of
// its body (encoding.go).
func (cl *call) decode(h http.Header) error {
	body, decs, err := decodeBody(h, cl.body)
	if err != nil {
		return err
	}
	if decs != nil {
		cl.raw, cl.body, cl.decoders = cl.body, body, decs
	}
	return nil
}

// wireNote is Record.Wire: the codings the body came in, and "linger".
func (cl *call) wireNote() string {
	note := ""
	if cl.decoders != nil {
		note = codingNote(cl.decoders)
	}
	if cl.lingered {
		note = strings.TrimSpace(note + " linger")
	}
	return note
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
	if c.endpoint.Pooling() {
		return c.poolingExtras(r)
	}
	b := make([]byte, 0, 96+c.extraLen)
	if c.streamOptions != nil {
		b = append(append(b, `,"stream_options":`...), c.streamOptions...)
	}
	if r.MaxTokens > 0 {
		b = c.appendMaxTokens(b, r.MaxTokens)
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
		case m.key == c.maxTokensKey() && r.MaxTokens > 0,
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
	case errors.As(err, new(*encodingError)):
		rec.ErrorClass = ErrContentEncoding
	case cl.ctx.Err() != nil:
		rec.ErrorClass = contextClass(cl.ctx)
	case rec.Status != 0:
		rec.ErrorClass = ErrStreamBroken
	default:
		rec.ErrorClass = ErrConnect
	}
}

// read consumes the stream. This is the per-chunk path: the time is taken as
// soon as the read that completes an event returns, and a chunk costs one
// decode into reused memory and, when it carries output, one append into
// preallocated space.
func (cl *call) read(cancel context.CancelCauseFunc) {
	rec := cl.rec
	sr := newSSEReader(cl.body)
	var dec chunkDecoder
	defer cl.stopLinger()
	for {
		ev, err := sr.next()
		at := cl.c.since()
		if err != nil {
			rec.End = at
			if sr.hasTail && cl.event(&dec, &sr.tail, at, true, cancel) {
				return
			}
			cl.end(err)
			return
		}
		if cl.event(&dec, &ev, at, false, cancel) {
			return
		}
	}
}

// take adds what a chunk said to the record.
func (cl *call) take(v *chunkView, at time.Duration) {
	rec := cl.rec
	if v.id != nil && rec.ServerID == "" {
		rec.ServerID = unquote(v.id)
	}
	if v.output() || v.finish != nil {
		cl.takeChoices(v, at)
	}
	if v.hasUsage {
		cl.checkUsage(v.usage, v.usageBad, &cl.usage, cl.hasUsage)
		cl.usage, cl.hasUsage = *v.usage, true
		cl.completion = v.usage.CompletionTokens
	}
	if v.timings != nil {
		cl.timings = append(cl.timings[:0], v.timings...)
	}
}

// takeChoices adds a chunk's output, one Chunk for each choice that
// carried some, and its finish reasons. A choice's output after its own
// finish_reason, and a choice with an index the request did not ask for,
// are flagged and left out of the timeline.
func (cl *call) takeChoices(v *chunkView, at time.Duration) {
	rec := cl.rec
	outputs := 0
	for i := range v.choices {
		if v.choices[i].output() {
			outputs++
		}
	}
	var tokens int32
	if outputs > 0 {
		tokens = cl.chunkTokens(v, outputs)
	}
	for i := range v.choices {
		c := &v.choices[i]
		if !c.output() && c.finish == nil {
			continue
		}
		if c.index < 0 || c.index >= cl.choices {
			// Its tokens are in the usage, not in the timeline: the
			// usage is not used either.
			cl.flag(ViolationChoiceIndex)
			cl.usageBroken = true
			continue
		}
		bit := uint64(1) << c.index
		switch {
		case !c.output():
		case cl.finished&bit != 0:
			cl.flag(ViolationChunkAfterFinish)
		default:
			rec.Chunks = append(rec.Chunks, Chunk{At: at, Tokens: tokens, Choice: int32(c.index)})
			cl.seen |= bit
			if rec.FirstToken == 0 {
				rec.FirstToken = at
			}
			if c.content && rec.FirstContent == 0 {
				rec.FirstContent = at
			}
		}
		if c.finish != nil {
			if cl.finish == nil {
				cl.finish = append([]byte(nil), c.finish...)
			}
			cl.finished |= bit
		}
	}
}

// event handles one event (or bare line) that arrived at at; it reports
// whether the record is settled. The last event of a body that ended before
// its blank line (tail) is used only when it is whole: [DONE], a chunk
// whose JSON is valid (a JSON object cut short never is), or an error; one
// cut mid-way is ignored, the stream being cut (decision 0209).
func (cl *call) event(dec *chunkDecoder, ev *sseEvent, at time.Duration, tail bool, cancel context.CancelCauseFunc) bool {
	if cl.c.endpoint.Kind == endpoints.KindResponses {
		return cl.responsesEvent(dec, ev, at, tail, cancel)
	}
	if cl.c.endpoint.Kind == endpoints.KindMessages {
		return cl.messagesEvent(dec, ev, at, tail, cancel) // typed events (messages.go)
	}
	rec := cl.rec
	switch {
	case ev.bare:
		// Not SSE: only a JSON error object means anything here.
		if v, err := dec.decode(ev.data); err == nil && v.err != nil {
			rec.End = at
			cl.errorEvent(v.err, cancel)
			return true
		}
		return false
	case !ev.message():
		if string(ev.typ) == "error" {
			// The server's own error (gateways send it so), whatever its shape.
			rec.End = at
			cl.errorEvent(ev.data, cancel)
			return true
		}
		cl.otherEvent(ev.typ)
		return false
	case len(ev.data) == 0:
		return false // an empty data line: a keep-alive
	case ev.data[0] != '{' && isDone(ev.data):
		rec.End = at
		cl.done(cancel)
		return true
	}
	v, err := dec.decode(ev.data)
	switch {
	case err != nil:
		return cl.undecodable("chunk", err, ev, at, tail)
	case v.err != nil:
		rec.End = at
		cl.errorEvent(v.err, cancel)
		return true
	}
	cl.take(&v, at)
	cl.reply.add(ev.data)
	cl.lastAt = at
	if cl.finishedAll() {
		cl.armLinger(cancel)
	}
	return false
}

// undecodable handles an event whose JSON did not decode (what, "chunk" or
// "event", names it in the error) and reports whether the record is
// settled: a body's last event cut short (tail) is ignored, the stream
// being cut (decision 0209); any other fails the request as malformed.
// Every kind's event path ends here.
func (cl *call) undecodable(what string, err error, ev *sseEvent, at time.Duration, tail bool) bool {
	if tail {
		return false
	}
	rec := cl.rec
	rec.End = at
	rec.ErrorClass = ErrMalformedChunk
	rec.Error = fmt.Sprintf("%s %d: %v: %.200q", what, len(rec.Chunks), err, ev.data)
	return true
}

// isDone reports the [DONE] marker, white space around it allowed (as
// go-openai's `data:\s*` and line trimming allowed it).
func isDone(data []byte) bool { return string(bytes.TrimSpace(data)) == doneMarker }

const doneMarker = "[DONE]"

// otherEvent counts an event of a type other than message and error: an
// OpenAI-compatible stream has none, so its data is not read as a chunk
// (an EventSource's onmessage does not see it either); a stream that fails
// says how many there were.
func (cl *call) otherEvent(typ []byte) {
	if cl.others == 0 {
		cl.otherType = string(typ)
	}
	cl.others++
}

// armLinger (re)starts the grace a stream gets after a finish_reason: when
// no event and no end of body comes within lingerGrace, the stream is taken
// as ended at its last event (NoDone, Wire "linger"), not waited on until
// the server closes it or the request times out (decision 0211). Only the
// few events after the finish pay for it.
func (cl *call) armLinger(cancel context.CancelCauseFunc) {
	if cl.linger == nil {
		cl.linger = time.AfterFunc(lingerGrace, func() { cancel(errLinger) })
		return
	}
	cl.linger.Reset(lingerGrace)
}

func (cl *call) stopLinger() {
	if cl.linger != nil {
		cl.linger.Stop()
	}
}

// chunkTokens is how many tokens an output chunk carried, as far as the
// chunk itself tells. A server that puts a running usage in every chunk
// (vLLM's continuous_usage_stats) tells it by the growth of
// completion_tokens; that is trusted only while every output chunk carried
// usage and one choice was asked for, so a usage that arrives only on the last output
// chunk is not taken for that chunk's own count. Otherwise a chunk is one
// token until settle spreads the final usage over the chunks.
func (cl *call) chunkTokens(v *chunkView, outputs int) int32 {
	if !v.hasUsage || outputs > 1 || cl.choices > 1 {
		// A running usage counts every choice: no chunk's own share.
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
	if !cl.finishedAll() {
		cl.rec.ErrorClass = ErrStreamBroken
		cl.rec.Error = fmt.Sprintf("stream ended with [DONE] but no finish_reason, after %d output chunks", len(cl.rec.Chunks))
		if cl.finish != nil {
			cl.rec.Error = fmt.Sprintf("stream ended with [DONE] but %d of its %d choices with output gave no finish_reason, after %d output chunks",
				bits.OnesCount64(cl.seen&^cl.finished), cl.outputChoices(), len(cl.rec.Chunks))
		}
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
// [DONE]); the record says NoDone and ends at the last event. So does a
// body still open lingerGrace after the last event that followed a
// finish_reason (Wire says "linger").
func (cl *call) end(err error) {
	rec := cl.rec
	lingered := errors.Is(context.Cause(cl.ctx), errLinger)
	switch {
	case (errors.Is(err, io.EOF) || lingered) && cl.finishedAll():
		rec.NoDone = true
		cl.lingered = lingered
		if cl.lastAt > 0 {
			rec.End = cl.lastAt
		}
		return
	case cl.ctx.Err() != nil:
		rec.ErrorClass = contextClass(cl.ctx)
	case errors.Is(err, errTooManyEmptyLines), errors.Is(err, ErrSSELineTooLong), errors.Is(err, errSSEEventTooLong):
		rec.ErrorClass = ErrMalformedChunk
	case errors.Is(err, errUnlabelledGzip), errors.As(err, new(*encodingError)):
		rec.ErrorClass = ErrContentEncoding
	case errors.Is(err, io.EOF):
		rec.ErrorClass = ErrStreamBroken
		rec.Error = fmt.Sprintf("stream ended without [DONE] or a finish_reason after %d output chunks%s", len(rec.Chunks), cl.othersSaid())
		return
	default:
		rec.ErrorClass = ErrStreamBroken
	}
	rec.Error = fmt.Sprintf("after %d output chunks: %v%s", len(rec.Chunks), err, cl.othersSaid())
}

// othersSaid tells a failure's message about events of other types that
// were ignored.
func (cl *call) othersSaid() string {
	if cl.others == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d events of type %.40q ignored: only message and error events are read)", cl.others, cl.otherType)
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
	case cl.decoders == nil && bytes.HasPrefix(body, gzipMagic):
		rec.ErrorClass = ErrContentEncoding
		rec.Error = errUnlabelledGzip.Error()
		return
	}
	if cl.c.endpoint.Kind == endpoints.KindResponses {
		cl.responsesWhole(body, cancel)
		return
	}
	if cl.c.endpoint.Pooling() {
		cl.takePooled(body, cancel) // pooling.go
		return
	}
	var dec chunkDecoder
	var v chunkView
	switch cl.c.endpoint.Kind {
	case endpoints.KindMessages:
		var m messagesView
		m, err = dec.decodeMessages(body)
		v = m.v
	default:
		v, err = dec.decode(body)
	}
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
	cl.reply.add(body)
	rec.Chunks, rec.FirstToken, rec.FirstContent = nil, 0, 0 // a whole response has no timeline
	if !cl.finishedAll() {
		rec.ErrorClass = ErrStreamBroken
		rec.Error = "response without a finish_reason"
	}
}

// drain reads what follows the end of a stream (usually only the chunked
// encoding's terminator) so that the connection goes back to the pool: Go
// closes a connection whose body was closed before its end. A server that
// keeps the stream open gets drainGrace, then the request is canceled; the
// Record is already complete by then, and says "linger" (decision 0211).
func (cl *call) drain(cancel context.CancelCauseFunc) {
	cl.stopLinger()
	t := time.AfterFunc(drainGrace, func() { cancel(errDrainTimeout) })
	defer t.Stop()
	_, _ = io.Copy(io.Discard, io.LimitReader(cl.body, drainLimit))
	if cl.raw != nil {
		// A decoder stops at the end of its data; the body's own end
		// (the chunked terminator) may still be unread.
		_, _ = io.Copy(io.Discard, io.LimitReader(cl.raw, drainLimit))
	}
	cl.lingered = errors.Is(context.Cause(cl.ctx), errDrainTimeout)
}

// settle fills the token counts, the chunks' token counts, the finish
// reason, the timings, the choices and the violations. A usage is used only
// when it is valid, never went backwards and is within the request's caps
// (claims.go); otherwise the chunks are counted, as when no usage came.
func (cl *call) settle() {
	rec := cl.rec
	rec.Wire = cl.wireNote()
	if cl.finish != nil {
		rec.FinishReason = unquote(cl.finish)
	}
	if cl.timings != nil {
		var t Timings
		if err := json.Unmarshal(cl.timings, &t); err == nil || errors.As(err, new(*json.UnmarshalTypeError)) {
			rec.Timings = &t
		}
	}
	trusted := cl.hasUsage && !cl.usageBroken && cl.withinCaps(&cl.usage)
	if trusted {
		rec.PromptTokens = cl.usage.PromptTokens
		rec.OutputTokens = cl.usage.CompletionTokens
		rec.CachedTokens = cl.usage.PromptTokensDetails.CachedTokens
		rec.ReasoningTokens = cl.usage.CompletionTokensDetails.ReasoningTokens
		rec.TokenSource = TokensFromUsage
	}
	n := len(rec.Chunks)
	switch {
	case n == 0:
	case trusted && cl.allUsage:
		rec.TokensPerChunkSource = ChunkTokensUsageGrowth
	case trusted && cl.usage.CompletionTokens >= n:
		spreadTokens(rec.Chunks, cl.usage.CompletionTokens)
		rec.TokensPerChunkSource = ChunkTokensUsageTotal
	default:
		for i := range rec.Chunks {
			rec.Chunks[i].Tokens = 1
		}
		rec.TokensPerChunkSource = ChunkTokensChunks
	}
	if !trusted && cl.streamed {
		rec.OutputTokens = n
		rec.TokenSource = TokensFromChunks
	}
	if k := cl.outputChoices(); k > 1 {
		rec.Choices = k
	}
	rec.Violations = cl.list()
}

// spreadTokens gives the chunks total tokens (total ≥ len(chunks)). The
// first chunk of each choice gets one: prefill makes exactly one token, and
// engines send it at once (vLLM's and SGLang's stream_interval and
// speculative drafts group decode steps, not the first token). The rest are
// spread as evenly as whole tokens allow over the later chunks: the first c
// of them hold round(c·rest/later).
func spreadTokens(chunks []Chunk, total int) {
	var firsts uint64
	for i := range chunks {
		c := uint64(1) << (uint(chunks[i].Choice) % maxChoices)
		chunks[i].Tokens = 0
		if firsts&c == 0 {
			firsts |= c
			chunks[i].Tokens = 1
		}
	}
	k := bits.OnesCount64(firsts)
	n, rest := int64(len(chunks)-k), int64(total-k)
	if n == 0 {
		// One chunk per choice: the first holds what the others do not.
		chunks[0].Tokens = int32(min(rest+1, math.MaxInt32))
		return
	}
	prev, i := int64(0), int64(0)
	for j := range chunks {
		if chunks[j].Tokens == 1 { // a choice's first (the others are 0 until here)
			continue
		}
		upTo := ((i+1)*rest + n/2) / n
		chunks[j].Tokens = int32(min(upTo-prev, math.MaxInt32))
		prev = upTo
		i++
	}
}
