package client

import (
	"bytes"
	"unicode/utf8"
)

// The Responses API's stream is typed events, each a JSON object with its
// "type" and "sequence_number" (docs/decisions/1200-responses-decoder.md).
// respDecode reads one event, or a whole (non-streamed) response object,
// with the chunk decoder's scanner: one pass, the whole line validated as
// JSON, nothing allocated.

// respType is an event's type, as far as a Record cares.
type respType uint8

const (
	respOther      respType = iota // any type not below (and no type)
	respCreated                    // response.created, response.in_progress, response.queued: the response's id
	respText                       // response.output_text.delta, response.refusal.delta: content
	respReasoning                  // response.reasoning_text.delta, response.reasoning_summary_text.delta: reasoning
	respToolArgs                   // response.function_call_arguments.delta, response.custom_tool_call_input.delta: a tool call
	respCompleted                  // response.completed: the end, usage
	respIncomplete                 // response.incomplete: the end, cut short (max_output_tokens, content_filter)
	respFailed                     // response.failed: the end, an error in response.error
	respError                      // error: an error event
)

// respTypes maps the event types a Record reads; any other is respOther.
var respTypes = []struct {
	name string
	typ  respType
}{
	{"response.output_text.delta", respText},
	{"response.refusal.delta", respText},
	{"response.reasoning_text.delta", respReasoning},
	{"response.reasoning_summary_text.delta", respReasoning},
	{"response.function_call_arguments.delta", respToolArgs},
	{"response.custom_tool_call_input.delta", respToolArgs},
	{"response.created", respCreated},
	{"response.in_progress", respCreated},
	{"response.queued", respCreated},
	{"response.completed", respCompleted},
	{"response.incomplete", respIncomplete},
	{"response.failed", respFailed},
	{"error", respError},
}

// classifyResp names the type of an event whose type is name (decoded).
func classifyResp(name []byte) respType {
	for _, t := range respTypes {
		if string(name) == t.name {
			return t.typ
		}
	}
	return respOther
}

// output reports whether an event of this type carries generated output
// when its delta is not empty.
func (t respType) output() bool { return t == respText || t == respReasoning || t == respToolArgs }

// terminal reports whether the type ends a stream.
func (t respType) terminal() bool {
	return t == respCompleted || t == respIncomplete || t == respFailed
}

// respView is what one event, or one whole response, said. Its slices
// point into the decoded line and usage into the decoder: it is valid
// until the next decode.
type respView struct {
	typ    respType
	hasTyp bool   // "type" was a string
	delta  bool   // "delta" is a non-empty string
	id     []byte // the raw JSON string of the response's id (response.id, or id of a whole response), nil when absent or ""
	// status is the raw JSON string of the response's status ("completed",
	// "incomplete", "failed", "in_progress"…), nil when absent or null.
	status []byte
	// reason is the raw JSON string of incomplete_details.reason, nil when
	// absent or null.
	reason   []byte
	usage    *wireUsage
	hasUsage bool
	usageBad bool
	// err is what says the event or response is an error: the raw value
	// of the event's "error" or the response's (response.failed's) when
	// not null, or the whole object (respDecode).
	err    []byte
	topErr []byte // an event's own "error"
	// message and detail: the object's own "message" or "detail" is there
	// and not null (respDecode then may take it for an error).
	message, detail bool
	// content, reasoning and tool: the response's output items carried
	// text, reasoning text or a function call (a whole response, and the
	// response of a terminal event).
	content, reasoning, tool bool
}

// respDecode reads one Responses event (the JSON after `data:`), or with
// whole a whole (non-streamed) response object, as json.Unmarshal would
// read it into these shapes, fields not listed being skipped (but
// validated):
//
//	EVENT = { "type": string|null, "delta": any (output when a non-empty string),
//	          "response": RESPONSE|null, "error": any,
//	          "message", "detail": any }
//	RESPONSE = { "id": string|null, "status": string|null,
//	             "incomplete_details": {"reason": string|null}|null,
//	             "error": any, "usage": USAGE|null,
//	             "output": [ { "type": string|null,
//	                           "content", "summary": [ {"text", "refusal": string|null} | any ] | any
//	                         } | null ] | null }
//	  (a whole response also "object", "message", "detail": any)
//	USAGE = { "input_tokens", "output_tokens": any,
//	          "input_tokens_details": {"cached_tokens": any}|null,
//	          "output_tokens_details": {"reasoning_tokens": any}|null }
//
// The rules are the chunk decoder's (chunk.go): keys match
// case-insensitively after decoding escapes, a repeated key's last value
// wins (a repeated object merges into the earlier one, null leaves it
// alone), a token count that is not an int marks the usage bad, an
// escaped type is decoded before it is matched. An error is an "error"
// member that is not null (the event's, or the response's: response.failed
// says why there), an event with "message" or "detail" and no type, or a
// whole response with "object": "error" or with "message" or "detail"
// and neither status nor usage (vLLM's and FastAPI's error bodies).
// FuzzResponsesEvent holds it to encoding/json.
func (d *chunkDecoder) respDecode(data []byte, whole bool) (respView, error) {
	d.b, d.i = data, 0
	d.usageBad = false
	d.errObject = false
	var v respView
	d.ws()
	if !d.is('{') {
		return respView{}, d.fail("want a JSON object")
	}
	err := d.object(1, func(key []byte) error {
		if whole {
			return d.respMember(&v, key, 1)
		}
		switch {
		case bytes.EqualFold(key, []byte("type")):
			return d.respType(&v)
		case bytes.EqualFold(key, []byte("delta")):
			v.delta = false
			if !d.is('"') {
				return d.skip(2)
			}
			raw, _, err := d.str()
			v.delta = nonEmptyString(raw)
			return err
		case bytes.EqualFold(key, []byte("response")):
			if d.null() {
				return nil
			}
			if !d.is('{') {
				return d.fail("response is not an object")
			}
			return d.object(2, func(key []byte) error { return d.respMember(&v, key, 2) })
		case bytes.EqualFold(key, []byte("error")):
			return d.respError(&v.topErr, 1)
		case bytes.EqualFold(key, []byte("message")):
			return d.present(&v.message)
		case bytes.EqualFold(key, []byte("detail")):
			return d.present(&v.detail)
		}
		return d.skip(2)
	})
	if err != nil {
		return respView{}, err
	}
	d.ws()
	if d.i != len(d.b) {
		return respView{}, d.fail("data after the object")
	}
	if v.hasUsage {
		v.usageBad = d.usageBad
	}
	if v.topErr != nil {
		v.err = v.topErr
	}
	words := v.message || v.detail
	switch {
	case v.err != nil:
	case whole && (d.errObject || words && v.status == nil && !v.hasUsage),
		!whole && words && !v.hasTyp:
		v.err = d.b
	}
	return v, nil
}

// respError reads an "error" member opening container depth+1 into dst:
// its raw value, nil for null.
func (d *chunkDecoder) respError(dst *[]byte, depth int) error {
	start := d.i
	*dst = nil
	if d.null() {
		return nil
	}
	err := d.skip(depth + 1)
	*dst = d.b[start:d.i]
	return err
}

// present reads a member at depth 1 ("message", "detail"), setting has
// when it is not null.
func (d *chunkDecoder) present(has *bool) error {
	*has = !d.null()
	if *has {
		return d.skip(2)
	}
	return nil
}

// match is a raw JSON string's value for comparing: its bytes when it
// holds no escape (what servers send: nothing allocated), else decoded.
func (d *chunkDecoder) match(raw []byte) []byte {
	inner := raw[1 : len(raw)-1]
	switch {
	case bytes.IndexByte(inner, '\\') < 0:
		return inner
	case len(inner) <= keyBufLen-utf8.UTFMax:
		return d.unescapeKey(inner)
	}
	return []byte(unquote(raw)) // an escaped string this long is no type: rare, so allocating is fine
}

// respType reads "type": a string, matched after decoding its escapes.
func (d *chunkDecoder) respType(v *respView) error {
	v.typ, v.hasTyp = respOther, false
	raw, err := d.stringOrNull("type")
	if err != nil || raw == nil {
		return err
	}
	v.hasTyp = true
	v.typ = classifyResp(d.match(raw))
	return nil
}

// respMember reads one member of a response object whose members are at
// depth+1 (the top level of a whole response is one too).
func (d *chunkDecoder) respMember(v *respView, key []byte, depth int) error {
	switch {
	case bytes.EqualFold(key, []byte("id")):
		raw, err := d.stringOrNull("id")
		v.id = nil
		if nonEmptyString(raw) {
			v.id = raw
		}
		return err
	case bytes.EqualFold(key, []byte("status")):
		raw, err := d.stringOrNull("status")
		v.status = raw
		return err
	case bytes.EqualFold(key, []byte("incomplete_details")):
		if d.null() {
			return nil
		}
		if !d.is('{') {
			return d.fail("incomplete_details is not an object")
		}
		return d.object(depth+1, func(key []byte) error {
			if bytes.EqualFold(key, []byte("reason")) {
				raw, err := d.stringOrNull("reason")
				v.reason = raw
				return err
			}
			return d.skip(depth + 2)
		})
	case bytes.EqualFold(key, []byte("error")):
		return d.respError(&v.err, depth)
	case depth == 1 && bytes.EqualFold(key, []byte("object")):
		start := d.i
		err := d.skip(2)
		d.errObject = string(d.b[start:d.i]) == `"error"`
		return err
	case depth == 1 && bytes.EqualFold(key, []byte("message")):
		return d.present(&v.message)
	case depth == 1 && bytes.EqualFold(key, []byte("detail")):
		return d.present(&v.detail)
	case bytes.EqualFold(key, []byte("usage")):
		return d.respUsage(v, depth+1)
	case bytes.EqualFold(key, []byte("output")):
		v.content, v.reasoning, v.tool = false, false, false
		if d.null() {
			return nil
		}
		if !d.is('[') {
			return d.fail("output is not an array")
		}
		return d.array(depth+1, func() error { return d.respItem(v, depth+2) })
	}
	return d.skip(depth + 1)
}

// respItem reads one output item, opening container number depth: a
// message with text, a reasoning item with text or a summary, a
// function_call (or custom_tool_call).
func (d *chunkDecoder) respItem(v *respView, depth int) error {
	if d.null() {
		return nil
	}
	if !d.is('{') {
		return d.fail("an output item is not an object")
	}
	var typ []byte
	var text, summary bool
	err := d.object(depth, func(key []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("type")):
			raw, err := d.stringOrNull("an item's type")
			typ = raw
			return err
		case bytes.EqualFold(key, []byte("content")):
			text = false
			return d.respParts(&text, depth+1)
		case bytes.EqualFold(key, []byte("summary")):
			summary = false
			return d.respParts(&summary, depth+1)
		}
		return d.skip(depth + 1)
	})
	if typ != nil {
		switch string(d.match(typ)) { // compared only: no allocation
		case "message":
			v.content = v.content || text
		case "reasoning":
			v.reasoning = v.reasoning || text || summary
		case "function_call", "custom_tool_call":
			v.tool = true
		}
	}
	return err
}

// respParts reads a content or summary array at depth: has is set when a
// part's "text" or "refusal" is a non-empty string. An element that is
// not an object is skipped; null leaves has alone.
func (d *chunkDecoder) respParts(has *bool, depth int) error {
	if d.null() {
		return nil
	}
	if !d.is('[') {
		return d.skip(depth)
	}
	return d.array(depth, func() error {
		if !d.is('{') {
			return d.skip(depth + 1)
		}
		var text, refusal bool
		err := d.object(depth+1, func(key []byte) error {
			f := &text
			switch {
			case bytes.EqualFold(key, []byte("text")):
			case bytes.EqualFold(key, []byte("refusal")):
				f = &refusal
			default:
				return d.skip(depth + 2)
			}
			raw, err := d.stringOrNull("a part's text")
			*f = nonEmptyString(raw)
			return err
		})
		*has = *has || text || refusal
		return err
	})
}

// respUsage reads a Responses usage object, opening container depth, into
// the decoder's wireUsage: input_tokens as the prompt, output_tokens as the
// completion, their details' cached and reasoning tokens.
func (d *chunkDecoder) respUsage(v *respView, depth int) error {
	if d.null() {
		v.usage, v.hasUsage = nil, false
		return nil
	}
	if !d.is('{') {
		return d.fail("usage is not an object")
	}
	d.u, d.usageBad = wireUsage{}, false
	v.usage, v.hasUsage = &d.u, true
	detail := func(name string, want string, dst *int) error {
		if d.null() {
			return nil
		}
		if !d.is('{') {
			return d.fail(name + " is not an object")
		}
		return d.object(depth+1, func(key []byte) error {
			if bytes.EqualFold(key, []byte(want)) {
				return d.intOrNull(dst, depth+2)
			}
			return d.skip(depth + 2)
		})
	}
	return d.object(depth, func(key []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("input_tokens")):
			return d.intOrNull(&d.u.PromptTokens, depth+1)
		case bytes.EqualFold(key, []byte("output_tokens")):
			return d.intOrNull(&d.u.CompletionTokens, depth+1)
		case bytes.EqualFold(key, []byte("input_tokens_details")):
			return detail("input_tokens_details", "cached_tokens", &d.u.PromptTokensDetails.CachedTokens)
		case bytes.EqualFold(key, []byte("output_tokens_details")):
			return detail("output_tokens_details", "reasoning_tokens", &d.u.CompletionTokensDetails.ReasoningTokens)
		}
		return d.skip(depth + 1)
	})
}
