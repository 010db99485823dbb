package client

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
)

// Anthropic's Messages API (endpoints.KindMessages; decision 1300): the
// request, the headers, and the typed events of its stream, read by the
// same zero-allocation scanner as the OpenAI kinds' chunks (chunk.go) into
// the same chunkView, so that the record's timeline, first-token times,
// usage checks and finish reason are chat's.

// messagesBody is the body the client marshals for KindMessages; extras
// follow (max_tokens among them: the API requires it, and llmbench sends
// the plan's, never one of its own making).
type messagesBody struct {
	Model    string    `json:"model"`
	Messages []Message `json:"messages"`
	// System is the request's system messages' contents, joined by
	// newlines: the API takes no "system" role in messages.
	System string `json:"system,omitempty"`
	Stream bool   `json:"stream"`
}

// newMessagesBody is r as a Messages API body.
func newMessagesBody(model string, r Request, stream bool) messagesBody {
	system, msgs := SplitSystem(r.Messages)
	return messagesBody{Model: model, Messages: msgs, System: system, Stream: stream}
}

// SplitSystem is msgs as the Messages API takes them: the system messages'
// contents joined by newlines (its "system"), and the others in order. The
// calibration counts a prompt so, as it is sent.
func SplitSystem(msgs []Message) (system string, rest []Message) {
	rest = make([]Message, 0, len(msgs))
	var parts []string
	for _, m := range msgs {
		if m.Role == "system" {
			parts = append(parts, m.Content)
			continue
		}
		rest = append(rest, m)
	}
	return strings.Join(parts, "\n"), rest
}

// anthropicVersion is the API version the request is written to (the
// anthropic-version header the API requires).
const anthropicVersion = "2023-06-01"

// SetMessagesHeaders adds the Messages API's headers: its version, and the
// key as x-api-key (Anthropic's) besides the Authorization bearer post has
// set (OpenAI-compatible gateways', vLLM's --api-key). Config.Headers come
// after and may replace either.
func SetMessagesHeaders(req *http.Request, apiKey string) {
	req.Header.Set("anthropic-version", anthropicVersion)
	if apiKey != "" {
		req.Header.Set("x-api-key", apiKey)
	}
}

// The finish reasons a stop_reason is recorded as, so that a record reads
// the same whatever the endpoint: end_turn and stop_sequence are "stop",
// max_tokens is "length", tool_use is "tool_calls"; any other (pause_turn,
// refusal…) is kept as it came.
var (
	finishStop      = []byte(`"stop"`)
	finishLength    = []byte(`"length"`)
	finishToolCalls = []byte(`"tool_calls"`)
)

func finishOf(stopReason []byte) []byte {
	switch string(stopReason) {
	case `"end_turn"`, `"stop_sequence"`:
		return finishStop
	case `"max_tokens"`:
		return finishLength
	case `"tool_use"`:
		return finishToolCalls
	}
	return stopReason
}

// messagesUsage is the Messages API's usage as it stands in a stream:
// message_start carries every count, message_delta the counts that grew
// (output_tokens at least); a count absent or null keeps its value, so the
// decoder that reads a whole stream holds it.
type messagesUsage struct {
	input, cacheCreation, cacheRead, output int
}

// wire is the usage in the record's terms: the prompt is every input token,
// those read from and written to the cache included (the API's
// input_tokens counts only the rest).
func (u *messagesUsage) wire() wireUsage {
	var w wireUsage
	w.PromptTokens = addSat(addSat(u.input, u.cacheCreation), u.cacheRead)
	w.CompletionTokens = u.output
	w.PromptTokensDetails.CachedTokens = u.cacheRead
	return w
}

// addSat adds without wrapping: a claim past the int range stays huge (and
// beyond the caps), a negative one negative (and flagged).
func addSat(a, b int) int {
	switch {
	case b > 0 && a > math.MaxInt-b:
		return math.MaxInt
	case b < 0 && a < math.MinInt-b:
		return math.MinInt
	}
	return a + b
}

// messagesView is what one Messages API event or message object said, in
// chunk terms (v), and its "type".
type messagesView struct {
	v   chunkView
	typ []byte // the raw JSON string of the top-level "type", nil when absent or null
}

// decodeMessages reads one event's data, or a whole message object, the way
// json.Unmarshal would read it into this shape, any other member skipped
// but validated:
//
//	{ "type", "id", "stop_reason": string|null,
//	  "message": { "id", "stop_reason": string|null, "content": [block|null]|null, "usage": usage|null } | null,
//	  "content": [block|null] | null,
//	  "content_block": block | null,
//	  "delta": { "text", "thinking", "partial_json", "stop_reason": string|null } | null,
//	  "usage": { "input_tokens", "cache_creation_input_tokens",
//	             "cache_read_input_tokens", "output_tokens": any } | null,
//	  "error": any }
//	block: { "type", "text", "thinking", "data": string|null, "input": any }
//
// Output is text (a non-empty delta.text, or a block's text), thinking (a
// non-empty delta.thinking, a block's thinking, a redacted_thinking
// block's data) or tool input (a non-empty delta.partial_json, a block's
// input object with a member); a signature is none. A stop_reason becomes
// the view's finish (finishOf). Keys match as chunkDecoder's do
// (case-insensitively, the last of a repeated key winning, a repeated
// object merging, a repeated array replacing), token counts are read as
// its are (intOrNull), and the counts accumulate in d.msgs over the
// stream. FuzzMessagesDecode holds it to encoding/json.
func (d *chunkDecoder) decodeMessages(data []byte) (messagesView, error) {
	d.b, d.i = data, 0
	d.cs = d.cs[:0]
	d.usageBad = false
	var m messagesView
	var st messagesState
	d.ws()
	if !d.is('{') {
		return messagesView{}, d.fail("want a JSON object")
	}
	err := d.object(1, func(key []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("type")):
			raw, err := d.stringOrNull("type")
			m.typ = raw
			return err
		case bytes.EqualFold(key, []byte("message")):
			if d.null() {
				return nil
			}
			if !d.is('{') {
				return d.fail("message is not an object")
			}
			return d.object(2, func(key []byte) error { return d.messageMember(key, 2, &m.v, &st.msgContent, &st.stop) })
		case bytes.EqualFold(key, []byte("content_block")):
			if d.null() {
				return nil
			}
			return d.block(2, &st.block)
		case bytes.EqualFold(key, []byte("delta")):
			return d.messagesDelta(&st.delta, &st.stop)
		case bytes.EqualFold(key, []byte("error")):
			start := d.i
			m.v.err = nil
			if d.null() {
				return nil
			}
			err := d.skip(2)
			m.v.err = d.b[start:d.i]
			return err
		}
		return d.messageMember(key, 1, &m.v, &st.content, &st.stop)
	})
	if err != nil {
		return messagesView{}, err
	}
	d.ws()
	if d.i != len(d.b) {
		return messagesView{}, d.fail("data after the object")
	}
	c := st.choice()
	if c.output() || c.finish != nil {
		d.cs = append(d.cs, c)
	}
	m.v.choices = d.cs
	m.v.content, m.v.reasoning, m.v.tool, m.v.finish = c.content, c.reasoning, c.tool, c.finish
	if m.v.hasUsage {
		d.u = d.msgs.wire()
		m.v.usage, m.v.usageBad = &d.u, d.usageBad
	}
	return m, nil
}

// messagesState is what one event's members said so far, each source
// apart, so that a repeated member replaces or merges as encoding/json's
// would.
type messagesState struct {
	block               messagesBlock // content_block (a repeated one merges)
	delta               messagesBlock // delta's text, thinking and partial_json
	content, msgContent messagesBlock // the content arrays' (a repeated one replaces), top-level and message's
	stop                []byte        // the last stop_reason, wherever it was
}

// messagesBlock is which output a block (or a delta, or a content array)
// holds.
type messagesBlock struct {
	text, thinking, tool bool
	data                 bool   // a non-empty "data" (redacted_thinking's)
	typ                  []byte // the raw "type"
}

// thinks reports thinking output: thinking text, or a redacted_thinking
// block's data.
func (b *messagesBlock) thinks() bool {
	return b.thinking || b.data && unquote(b.typ) == "redacted_thinking"
}

// choice is the event as the one choice of a chunk.
func (st *messagesState) choice() choiceView {
	var c choiceView
	for _, b := range []*messagesBlock{&st.block, &st.delta, &st.content, &st.msgContent} {
		c.content = c.content || b.text
		c.reasoning = c.reasoning || b.thinks()
		c.tool = c.tool || b.tool
	}
	if nonEmptyString(st.stop) {
		c.finish = finishOf(st.stop)
	}
	return c
}

// messageMember reads a member a message object has (id, stop_reason,
// content, usage), at depth (1 at the top, 2 in message_start's message);
// any other is skipped.
func (d *chunkDecoder) messageMember(key []byte, depth int, v *chunkView, content *messagesBlock, stop *[]byte) error {
	switch {
	case bytes.EqualFold(key, []byte("id")):
		raw, err := d.stringOrNull("id")
		v.id = nil
		if nonEmptyString(raw) {
			v.id = raw
		}
		return err
	case bytes.EqualFold(key, []byte("stop_reason")):
		raw, err := d.stringOrNull("stop_reason")
		*stop = raw
		return err
	case bytes.EqualFold(key, []byte("content")):
		// A repeated content replaces the earlier; null empties it.
		*content = messagesBlock{}
		if d.null() {
			return nil
		}
		if !d.is('[') {
			return d.fail("content is not an array")
		}
		return d.array(depth+1, func() error {
			var b messagesBlock
			if d.null() {
				return nil
			}
			err := d.block(depth+2, &b)
			content.text, content.thinking, content.tool = content.text || b.text, content.thinking || b.thinks(), content.tool || b.tool
			return err
		})
	case bytes.EqualFold(key, []byte("usage")):
		return d.messagesUsage(v, depth+1)
	}
	return d.skip(depth + 1)
}

// block reads a content block that opens container number depth into b,
// merging with what b holds: a key's last value wins.
func (d *chunkDecoder) block(depth int, b *messagesBlock) error {
	if !d.is('{') {
		return d.fail("a content block is not an object")
	}
	return d.object(depth, func(key []byte) error {
		var dst *bool
		switch {
		case bytes.EqualFold(key, []byte("type")):
			raw, err := d.stringOrNull("a block's type")
			b.typ = raw
			return err
		case bytes.EqualFold(key, []byte("text")):
			dst = &b.text
		case bytes.EqualFold(key, []byte("thinking")):
			dst = &b.thinking
		case bytes.EqualFold(key, []byte("data")):
			dst = &b.data
		case bytes.EqualFold(key, []byte("input")):
			b.tool = false
			if !d.is('{') {
				return d.skip(depth + 1)
			}
			return d.object(depth+1, func([]byte) error {
				b.tool = true
				return d.skip(depth + 2)
			})
		default:
			return d.skip(depth + 1)
		}
		raw, err := d.stringOrNull("a block's text")
		*dst = nonEmptyString(raw)
		return err
	})
}

// messagesDelta reads a content_block_delta's or message_delta's delta at
// depth 2 into b. As in encoding/json, a repeated delta merges into the
// earlier, null leaves it.
func (d *chunkDecoder) messagesDelta(b *messagesBlock, stop *[]byte) error {
	if d.null() {
		return nil
	}
	if !d.is('{') {
		return d.fail("delta is not an object")
	}
	return d.object(2, func(key []byte) error {
		var dst *bool
		switch {
		case bytes.EqualFold(key, []byte("text")):
			dst = &b.text
		case bytes.EqualFold(key, []byte("thinking")):
			dst = &b.thinking
		case bytes.EqualFold(key, []byte("partial_json")):
			dst = &b.tool
		case bytes.EqualFold(key, []byte("stop_reason")):
			raw, err := d.stringOrNull("stop_reason")
			*stop = raw
			return err
		default:
			return d.skip(3)
		}
		raw, err := d.stringOrNull("delta text")
		*dst = nonEmptyString(raw)
		return err
	})
}

// messagesUsage reads a usage object (or null) that opens container number
// depth into the stream's counts.
func (d *chunkDecoder) messagesUsage(v *chunkView, depth int) error {
	if d.null() {
		return nil
	}
	if !d.is('{') {
		return d.fail("usage is not an object")
	}
	v.hasUsage = true
	u := &d.msgs
	return d.object(depth, func(key []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("input_tokens")):
			return d.intOrNull(&u.input, depth+1)
		case bytes.EqualFold(key, []byte("cache_creation_input_tokens")):
			return d.intOrNull(&u.cacheCreation, depth+1)
		case bytes.EqualFold(key, []byte("cache_read_input_tokens")):
			return d.intOrNull(&u.cacheRead, depth+1)
		case bytes.EqualFold(key, []byte("output_tokens")):
			return d.intOrNull(&u.output, depth+1)
		}
		return d.skip(depth + 1)
	})
}

// The Messages API's stream events the client reads (any other, ping
// among them, is skipped, as the API's SDKs skip them).
const (
	evMessageStart      = "message_start"
	evMessageDelta      = "message_delta"
	evMessageStop       = "message_stop"
	evContentBlockStart = "content_block_start"
	evContentBlockDelta = "content_block_delta"
	evContentBlockStop  = "content_block_stop"
	evError             = "error"
)

// messagesEvent is event for KindMessages: the event's name says what it
// is (the data's "type" when it has none, as a gateway that sends only
// data lines may), message_stop ends the stream as [DONE] does, an error
// event or an "error" member fails it, and the events that carry a
// message, block or delta go to take as a chunk would.
func (cl *call) messagesEvent(dec *chunkDecoder, ev *sseEvent, at time.Duration, tail bool, cancel context.CancelCauseFunc) bool {
	rec := cl.rec
	name := ev.typ
	switch {
	case ev.bare:
		if m, err := dec.decodeMessages(ev.data); err == nil && m.v.err != nil {
			rec.End = at
			cl.errorEvent(m.v.err, cancel)
			return true
		}
		return false
	case string(name) == evError:
		rec.End = at
		cl.errorEvent(ev.data, cancel)
		return true
	case string(name) == evMessageStop:
		rec.End = at
		cl.messageStop(cancel)
		return true
	case !ev.message() && !messagesRead(name):
		return false // ping, or an event type the client does not know
	case len(ev.data) == 0:
		return false
	}
	m, err := dec.decodeMessages(ev.data)
	switch {
	case err != nil:
		return cl.undecodable("event", err, ev, at, tail)
	case m.v.err != nil:
		rec.End = at
		cl.errorEvent(m.v.err, cancel)
		return true
	}
	if ev.message() {
		name = bytes.Trim(m.typ, `"`)
		if !messagesRead(name) && string(name) != evMessageStop {
			return false
		}
	}
	if string(name) == evMessageStop {
		rec.End = at
		cl.messageStop(cancel)
		return true
	}
	cl.take(&m.v, at)
	cl.lastAt = at
	if cl.finishedAll() {
		cl.armLinger(cancel)
	}
	return false
}

// messagesRead reports the events whose data the client reads.
func messagesRead(name []byte) bool {
	switch string(name) {
	case evMessageStart, evMessageDelta, evContentBlockStart, evContentBlockDelta, evContentBlockStop:
		return true
	}
	return false
}

// messageStop ends a stream at message_stop: a success when a stop_reason
// came.
func (cl *call) messageStop(cancel context.CancelCauseFunc) {
	if !cl.finishedAll() {
		cl.rec.ErrorClass = ErrStreamBroken
		cl.rec.Error = fmt.Sprintf("stream ended with message_stop but no stop_reason, after %d output chunks", len(cl.rec.Chunks))
		return
	}
	cl.drain(cancel)
}
