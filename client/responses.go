package client

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/llmbench-org/llmbench/endpoints"
)

// The Responses API (endpoints.KindResponses): the request the client
// builds, and what it reads of the typed events that answer it
// (docs/decisions/1200-responses-decoder.md).

// EndpointResponses is the Responses endpoint Config.Endpoint accepts:
// POST {BaseURL}/responses.
const EndpointResponses = endpoints.Responses

// responsesBody is a Responses request: the messages go as the input list
// of {"role","content"} items (the API's "easy input messages"); extras
// follow as for the other kinds.
type responsesBody struct {
	Model  string    `json:"model"`
	Input  []Message `json:"input"`
	Stream bool      `json:"stream"`
}

func newResponsesBody(model string, r Request, stream bool) responsesBody {
	msgs := r.Messages
	if msgs == nil {
		msgs = []Message{}
	}
	return responsesBody{Model: model, Input: msgs, Stream: stream}
}

// appendMaxTokens appends the member that bounds the output: the
// Responses API's max_output_tokens, the other kinds' max_tokens.
func (c *Client) appendMaxTokens(b []byte, n int) []byte {
	if c.endpoint.Kind == endpoints.KindResponses {
		b = append(b, `,"max_output_tokens":`...)
	} else {
		b = append(b, `,"max_tokens":`...)
	}
	return strconv.AppendInt(b, int64(n), 10)
}

// maxTokensKey is the extra body member a request's own output bound
// replaces.
func (c *Client) maxTokensKey() string {
	if c.endpoint.Kind == endpoints.KindResponses {
		return "max_output_tokens"
	}
	return "max_tokens"
}

// asksUsage reports whether include_usage is the way to ask for usage:
// the Responses API always sends it at completion and has no such option.
func (c *Client) asksUsage() bool {
	return c.endpoint.Kind != endpoints.KindResponses && c.endpoint.Kind != endpoints.KindMessages // the Messages API always sends usage too
}

// respState is what a call tracks of a Responses stream.
type respState struct {
	tool     bool // a function call's arguments (or a function_call item) came
	terminal bool // response.completed or response.incomplete came
}

// respFinish maps the end of a response to the finish reason a Record
// keeps, in chat's words: completed is stop (tool_calls when the response
// called a function), incomplete is length when max_output_tokens cut it,
// else its reason as it came (content_filter), or "incomplete".
func respFinish(typ respType, status, reason []byte, tool bool) []byte {
	switch {
	case typ == respIncomplete || string(status) == `"incomplete"`:
		switch {
		case string(reason) == `"max_output_tokens"`:
			return []byte(`"length"`)
		case nonEmptyString(reason):
			return append([]byte(nil), reason...)
		}
		return []byte(`"incomplete"`)
	case tool:
		return finishToolCalls // messages.go: chat's word, shared
	}
	return []byte(`"stop"`)
}

// responsesEvent handles one event (or bare line) of a Responses stream
// that arrived at at, as event does for the other kinds; it reports whether
// the record is settled. The data's "type" says what the event is (the
// event: line, when the data has none); an event named "error", whatever
// its data, is the server's error. The first event with a non-empty delta
// of output text, reasoning or function-call arguments is the first
// token; each such event is one Chunk. response.completed and
// response.incomplete end the stream as [DONE] ends chat's, with the
// usage; response.failed and error events end it as an error event does.
func (cl *call) responsesEvent(dec *chunkDecoder, ev *sseEvent, at time.Duration, tail bool, cancel context.CancelCauseFunc) bool {
	rec := cl.rec
	switch {
	case ev.bare:
		if v, err := dec.respDecode(ev.data, true); err == nil && v.err != nil {
			rec.End = at
			cl.errorEvent(v.err, cancel)
			return true
		}
		return false
	case string(ev.typ) == "error":
		rec.End = at
		cl.errorEvent(ev.data, cancel)
		return true
	case len(ev.data) == 0:
		return false
	case ev.data[0] != '{' && isDone(ev.data):
		// Not in the Responses API; a server that sends it anyway after
		// the response's end is done, before it the stream is cut.
		rec.End = at
		if !cl.resp.terminal {
			rec.ErrorClass = ErrStreamBroken
			rec.Error = fmt.Sprintf("stream ended with [DONE] before response.completed, after %d output chunks", len(rec.Chunks))
			return true
		}
		cl.drain(cancel)
		return true
	}
	v, err := dec.respDecode(ev.data, false)
	switch {
	case err != nil:
		return cl.undecodable("event", err, ev, at, tail)
	}
	if !v.hasTyp {
		v.typ = classifyResp(ev.typ)
	}
	switch {
	case v.err != nil && v.typ != respFailed:
		rec.End = at
		cl.errorEvent(v.err, cancel)
		return true
	case v.typ == respError:
		rec.End = at
		cl.errorEvent(ev.data, cancel)
		return true
	}
	cl.respTake(&v, at)
	if v.typ.terminal() {
		rec.End = at
		cl.respEnd(&v, cancel)
		return true
	}
	cl.lastAt = at
	return false
}

// respTake adds what an event said to the record: its output as one Chunk
// (Responses has one output sequence: choice 0), the response's id, a
// function call's sighting, the usage.
func (cl *call) respTake(v *respView, at time.Duration) {
	rec := cl.rec
	if v.id != nil && rec.ServerID == "" {
		rec.ServerID = unquote(v.id)
	}
	if v.typ == respToolArgs || v.tool {
		cl.resp.tool = true
	}
	if v.typ.output() && v.delta {
		// Nothing is read after the terminal event, so no output can
		// follow the finish.
		rec.Chunks = append(rec.Chunks, Chunk{At: at, Tokens: 1})
		cl.seen |= 1
		if rec.FirstToken == 0 {
			rec.FirstToken = at
		}
		if v.typ == respText && rec.FirstContent == 0 {
			rec.FirstContent = at
		}
		cl.allUsage = false // no running usage: the final one is spread
	}
	if v.hasUsage {
		cl.checkUsage(v.usage, v.usageBad, &cl.usage, cl.hasUsage)
		cl.usage, cl.hasUsage = *v.usage, true
		cl.completion = v.usage.CompletionTokens
	}
}

// respEnd ends a stream at its terminal event: completed and incomplete
// give the finish reason and the stream is done; failed is the server's
// error (response.error).
func (cl *call) respEnd(v *respView, cancel context.CancelCauseFunc) {
	if v.typ == respFailed || string(v.status) == `"failed"` {
		msg := v.err
		if msg == nil {
			msg = []byte(`{"message":"response.failed without an error"}`)
		}
		cl.errorEvent(msg, cancel)
		return
	}
	cl.resp.terminal = true
	cl.finish = respFinish(v.typ, v.status, v.reason, cl.resp.tool)
	cl.finished |= 1
	cl.drain(cancel)
}

// responsesWhole reads a non-streamed Responses answer: a response object
// with its output items and usage (readWhole has read the body).
func (cl *call) responsesWhole(body []byte, cancel context.CancelCauseFunc) {
	rec := cl.rec
	var dec chunkDecoder
	v, err := dec.respDecode(body, true)
	switch {
	case err != nil:
		rec.ErrorClass = ErrMalformedChunk
		rec.Error = fmt.Sprintf("response: %v: %.200q", err, body)
		return
	case v.err != nil:
		cl.errorEvent(v.err, cancel)
		return
	}
	if v.id != nil {
		rec.ServerID = unquote(v.id)
	}
	if v.hasUsage {
		cl.checkUsage(v.usage, v.usageBad, &cl.usage, false)
		cl.usage, cl.hasUsage = *v.usage, true
	}
	switch string(v.status) {
	case `"completed"`, `"incomplete"`:
		cl.finish = respFinish(respOther, v.status, v.reason, v.tool)
		cl.finished |= 1
	default:
		rec.ErrorClass = ErrStreamBroken
		rec.Error = fmt.Sprintf("response with status %.40s, not completed or incomplete", orNull(v.status))
	}
}

func orNull(raw []byte) []byte {
	if raw == nil {
		return []byte("null")
	}
	return raw
}
