package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unicode/utf16"
	"unicode/utf8"
)

// The per-chunk path reads a raw data line (sseReader, sse.go) and picks out
// the few fields a Record needs with chunkDecoder, a single-pass scanner that
// validates the whole line as JSON and never allocates. go-openai's own Recv
// decodes every string of a full ChatCompletionStreamResponse, and even a
// json.Unmarshal into a small reused struct allocates about 8 times per call
// (decode state, parse stack, key folding). See
// docs/decisions/0204-client-chunk-decoder.md and client/BENCHMARKS.md.

// wireUsage is the usage object.
type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// chunkView is what one chunk said. Its slices point into the decoded line
// and usage and choices into the decoder: it is valid until the next decode.
type chunkView struct {
	id        []byte     // the raw JSON string of the chunk's id, nil when absent, null or ""
	content   bool       // a choice carried generated text: delta.content, message.content or text
	reasoning bool       // a choice carried reasoning text: reasoning_content or reasoning
	tool      bool       // a choice carried a non-empty tool_calls array
	finish    []byte     // the raw JSON string of the first non-empty finish_reason, nil when none
	usage     *wireUsage // set when hasUsage
	hasUsage  bool
	// usageBad: a token count in usage was not a JSON integer that fits an
	// int (a fraction, an exponent, a string, beyond ±2⁶³); it reads as 0.
	usageBad bool
	err      []byte // the raw value of a top-level "error" member other than null: an error event
	timings  []byte // the raw "timings" object (llama.cpp), nil when absent or not an object
	// choices are the chunk's non-null choices, in order, each as read.
	choices []choiceView
}

// choiceView is what one choice of a chunk said.
type choiceView struct {
	// index is the choice's "index" (0 when absent or null), or
	// badChoiceIndex when it is not an integer in [0, maxChoices).
	index                    int
	content, reasoning, tool bool
	finish                   []byte // the raw JSON string of its finish_reason when not empty
}

// output reports whether the choice carried generated output of any kind.
func (c *choiceView) output() bool { return c.content || c.reasoning || c.tool }

// maxChoices bounds the choices a request is measured over (n ≤ 64): a
// choice is a bit in the client's per-request masks.
const maxChoices = 64

// badChoiceIndex is the index of a choice whose "index" is not one the
// client measures.
const badChoiceIndex = -1

// output reports whether the chunk carried generated output of any kind.
func (v *chunkView) output() bool { return v.content || v.reasoning || v.tool }

// chunkDecoder reads one chunk's JSON the way json.Unmarshal would read it
// into this shape, fields not listed being skipped (but still validated):
//
//	{ "id": string|null,
//	  "choices": [ { "index": any,
//	                 "delta"|"message": { "content", "reasoning_content", "reasoning": string|null|[part],
//	                                      "tool_calls": any } | null,
//	                 "text": string|null,
//	                 "finish_reason": string|null } | null ] | null,
//	  "usage": { "prompt_tokens", "completion_tokens": any,
//	             "prompt_tokens_details": { "cached_tokens": any } | null,
//	             "completion_tokens_details": { "reasoning_tokens": any } | null } | null,
//	  "error": any,
//	  "object", "message", "detail": any,
//	  "timings": any }
//
// The same shape covers a streamed chat chunk (delta), a non-streamed chat
// response (message), a completions chunk or response (text), an error event
// ({"error": …}, or unwrapped: see decode) and llama.cpp's timings.
// tool_calls counts as output when it is a non-empty array, whatever its
// elements; error is kept raw when it is not null, timings when it is an
// object; any other value of these three is read (and validated) but
// ignored.
//
// As in encoding/json, keys match case-insensitively (bytes.EqualFold, after
// decoding escapes), a repeated key's last value wins (a repeated object
// merges into the earlier one), and nesting stops at 10000 levels. Where it
// differs, on purpose: a repeated "choices" array replaces the earlier
// (encoding/json would merge them element by element); a text field may
// also be an array of parts ([{"type":"text","text":"…"}], as chat messages
// may be written; see part); a token count that is not an int does not fail
// the chunk but marks the usage bad (intOrNull); a choice's "index" outside
// [0, maxChoices) or not an integer is kept as badChoiceIndex. The text
// fields that count as generated content are content, and the reasoning
// text of thinking models (reasoning_content in vLLM and SGLang, reasoning
// in newer vLLM). FuzzChunkDecode holds the decoder to encoding/json and
// these rules.
type chunkDecoder struct {
	b        []byte // the line being decoded
	i        int    // read position in b
	u        wireUsage
	usageBad bool
	// errObject: "object" is "error"; errWords: "message" or "detail" is
	// there and not null (decode then takes the line for an error).
	errObject, errWords bool
	cs                  []choiceView    // the choices of the chunk, reused (grows once to the most a chunk held)
	keyBuf              [keyBufLen]byte // an escaped key, decoded
	msgs                messagesUsage   // the Messages API's counts so far in the stream (messages.go)
}

// keyBufLen bounds the decoded escaped keys the decoder compares; a longer
// key cannot be one of its field names however it is escaped.
const keyBufLen = 128

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// errNotChunk marks a data line that is not a chat completion chunk.
var errNotChunk = errors.New("not a chat completion chunk")

// decode reads one data line (the JSON after `data:`).
func (d *chunkDecoder) decode(data []byte) (chunkView, error) {
	d.b, d.i = data, 0
	d.cs = d.cs[:0]
	d.errObject, d.errWords = false, false
	var v chunkView
	d.ws()
	if !d.is('{') {
		return chunkView{}, d.fail("want a JSON object")
	}
	if err := d.chunk(&v); err != nil {
		return chunkView{}, err
	}
	d.ws()
	if d.i != len(d.b) {
		return chunkView{}, d.fail("data after the object")
	}
	v.choices = d.cs
	if v.hasUsage {
		v.usageBad = d.usageBad
	}
	if v.err == nil && (d.errObject || d.errWords && len(d.cs) == 0 && !v.hasUsage) {
		// An error not wrapped in "error": vLLM's {"object":"error",
		// "message":…}, or a bare {"message"|"detail": …} with no choice
		// and no usage. errorMessage reads the whole object.
		v.err = d.b
	}
	return v, nil
}

// chunk reads the top-level object.
func (d *chunkDecoder) chunk(v *chunkView) error {
	return d.object(1, func(key []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("id")):
			raw, err := d.stringOrNull("id")
			v.id = nil
			if nonEmptyString(raw) {
				v.id = raw
			}
			return err
		case bytes.EqualFold(key, []byte("choices")):
			return d.choices(v)
		case bytes.EqualFold(key, []byte("usage")):
			return d.usage(v)
		case bytes.EqualFold(key, []byte("error")):
			start := d.i
			v.err = nil
			if d.null() {
				return nil
			}
			err := d.skip(2)
			v.err = d.b[start:d.i]
			return err
		case bytes.EqualFold(key, []byte("object")):
			start := d.i
			err := d.skip(2)
			d.errObject = string(d.b[start:d.i]) == `"error"`
			return err
		case bytes.EqualFold(key, []byte("message")), bytes.EqualFold(key, []byte("detail")):
			d.errWords = !d.null()
			if d.errWords {
				return d.skip(2)
			}
			return nil
		case bytes.EqualFold(key, []byte("timings")):
			start := d.i
			isObj := d.is('{')
			err := d.skip(2)
			v.timings = nil
			if isObj {
				v.timings = d.b[start:d.i]
			}
			return err
		}
		return d.skip(2)
	})
}

// choices reads the choices array at depth 2. A repeated "choices"
// replaces what the earlier one said.
func (d *chunkDecoder) choices(v *chunkView) error {
	d.cs = d.cs[:0]
	v.content, v.reasoning, v.tool, v.finish = false, false, false, nil
	if d.null() {
		return nil
	}
	if !d.is('[') {
		return d.fail("choices is not an array")
	}
	return d.array(2, func() error {
		if d.null() {
			return nil
		}
		if !d.is('{') {
			return d.fail("a choice is not an object")
		}
		var delta, message [4]bool // content, reasoning_content, reasoning, tool_calls
		var text bool
		var finish []byte
		index := 0
		err := d.object(3, func(key []byte) error {
			switch {
			case bytes.EqualFold(key, []byte("delta")):
				return d.delta(&delta)
			case bytes.EqualFold(key, []byte("message")):
				return d.delta(&message)
			case bytes.EqualFold(key, []byte("text")):
				raw, err := d.stringOrNull("text")
				text = nonEmptyString(raw)
				return err
			case bytes.EqualFold(key, []byte("finish_reason")):
				raw, err := d.stringOrNull("finish_reason")
				finish = raw
				return err
			case bytes.EqualFold(key, []byte("index")):
				return d.choiceIndex(&index)
			}
			return d.skip(4)
		})
		c := choiceView{index: index, content: delta[0] || message[0] || text,
			reasoning: delta[1] || delta[2] || message[1] || message[2], tool: delta[3] || message[3]}
		if nonEmptyString(finish) {
			c.finish = finish
		}
		d.cs = append(d.cs, c)
		v.content = v.content || c.content
		v.reasoning = v.reasoning || c.reasoning
		v.tool = v.tool || c.tool
		if v.finish == nil {
			v.finish = c.finish
		}
		return err
	})
}

// choiceIndex reads a choice's index: null leaves it alone (as
// encoding/json does); an integer in [0, maxChoices) is kept; any other
// value (negative, too large, a fraction, a string) is read, validated and
// kept as badChoiceIndex, for the caller to flag.
func (d *chunkDecoder) choiceIndex(dst *int) error {
	if d.null() {
		return nil
	}
	*dst = badChoiceIndex
	if !d.is('-') && !d.digit() {
		return d.skip(4)
	}
	raw, err := d.number()
	if err != nil {
		return err
	}
	if n, ok := parseInt(raw); ok && n >= 0 && n < maxChoices {
		*dst = n
	}
	return nil
}

// delta reads a choice's delta (or message) at depth 4, noting which text
// fields hold text and whether tool_calls holds a call. As in encoding/json,
// a repeated delta merges into the earlier one and null leaves it alone.
func (d *chunkDecoder) delta(text *[4]bool) error {
	if d.null() {
		return nil
	}
	if !d.is('{') {
		return d.fail("delta is not an object")
	}
	return d.object(4, func(key []byte) error {
		f := -1
		switch {
		case bytes.EqualFold(key, []byte("content")):
			f = 0
		case bytes.EqualFold(key, []byte("reasoning_content")):
			f = 1
		case bytes.EqualFold(key, []byte("reasoning")):
			f = 2
		case bytes.EqualFold(key, []byte("tool_calls")):
			text[3] = false
			if !d.is('[') {
				return d.skip(5)
			}
			return d.array(5, func() error {
				text[3] = true
				return d.skip(6)
			})
		default:
			return d.skip(5)
		}
		if d.is('[') {
			// Content as an array of parts, as the chat API allows it in a
			// message: text when a part has non-empty text.
			text[f] = false
			return d.array(5, func() error { return d.part(&text[f]) })
		}
		raw, err := d.stringOrNull("delta text")
		text[f] = nonEmptyString(raw)
		return err
	})
}

// part reads one element of a parts array at depth 6: an object whose
// "text" is a string (or null), {"type":"text","text":"…"}, or a string;
// a non-empty text sets has. Any other element is not text; a "text" that
// is neither string nor null is an error, as a text field's is.
func (d *chunkDecoder) part(has *bool) error {
	switch {
	case d.is('"'):
		raw, _, err := d.str()
		*has = *has || nonEmptyString(raw)
		return err
	case !d.is('{'):
		return d.skip(6)
	}
	var partText bool
	err := d.object(6, func(key []byte) error {
		if bytes.EqualFold(key, []byte("text")) {
			raw, err := d.stringOrNull("a part's text")
			partText = nonEmptyString(raw)
			return err
		}
		return d.skip(7)
	})
	*has = *has || partText
	return err
}

// usage reads the usage object at depth 2.
func (d *chunkDecoder) usage(v *chunkView) error {
	if d.null() {
		v.usage, v.hasUsage = nil, false
		return nil
	}
	if !d.is('{') {
		return d.fail("usage is not an object")
	}
	d.u, d.usageBad = wireUsage{}, false
	v.usage, v.hasUsage = &d.u, true
	return d.object(2, func(key []byte) error {
		switch {
		case bytes.EqualFold(key, []byte("prompt_tokens")):
			return d.intOrNull(&d.u.PromptTokens, 3)
		case bytes.EqualFold(key, []byte("completion_tokens")):
			return d.intOrNull(&d.u.CompletionTokens, 3)
		case bytes.EqualFold(key, []byte("prompt_tokens_details")):
			if d.null() {
				return nil
			}
			if !d.is('{') {
				return d.fail("prompt_tokens_details is not an object")
			}
			return d.object(3, func(key []byte) error {
				if bytes.EqualFold(key, []byte("cached_tokens")) {
					return d.intOrNull(&d.u.PromptTokensDetails.CachedTokens, 4)
				}
				return d.skip(4)
			})
		case bytes.EqualFold(key, []byte("completion_tokens_details")):
			if d.null() {
				return nil
			}
			if !d.is('{') {
				return d.fail("completion_tokens_details is not an object")
			}
			return d.object(3, func(key []byte) error {
				if bytes.EqualFold(key, []byte("reasoning_tokens")) {
					return d.intOrNull(&d.u.CompletionTokensDetails.ReasoningTokens, 4)
				}
				return d.skip(4)
			})
		}
		return d.skip(3)
	})
}

// object reads the object at d.i, which opens container number depth,
// calling member with each key while d.i is at the key's value.
func (d *chunkDecoder) object(depth int, member func(key []byte) error) error {
	if depth > maxDepth {
		return d.fail("nested too deep")
	}
	d.i++ // '{'
	d.ws()
	if d.is('}') {
		d.i++
		return nil
	}
	for {
		key, err := d.key()
		if err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		d.ws()
		switch {
		case d.is(','):
			d.i++
			d.ws()
		case d.is('}'):
			d.i++
			return nil
		default:
			return d.fail("want , or } after an object member")
		}
	}
}

// array reads the array at d.i, which opens container number depth, calling
// elem while d.i is at each element.
func (d *chunkDecoder) array(depth int, elem func() error) error {
	if depth > maxDepth {
		return d.fail("nested too deep")
	}
	d.i++ // '['
	d.ws()
	if d.is(']') {
		d.i++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		d.ws()
		switch {
		case d.is(','):
			d.i++
			d.ws()
		case d.is(']'):
			d.i++
			return nil
		default:
			return d.fail("want , or ] after an array element")
		}
	}
}

// key reads a member's key and its colon, leaving d.i at the value. An
// escaped key comes back decoded, in d.keyBuf.
func (d *chunkDecoder) key() ([]byte, error) {
	if !d.is('"') {
		return nil, d.fail("want a key")
	}
	raw, escaped, err := d.str()
	if err != nil {
		return nil, err
	}
	d.ws()
	if !d.is(':') {
		return nil, d.fail("want : after a key")
	}
	d.i++
	d.ws()
	inner := raw[1 : len(raw)-1]
	if !escaped {
		return inner, nil
	}
	return d.unescapeKey(inner), nil
}

// skip reads any value at d.i; depth is the container number it would open.
func (d *chunkDecoder) skip(depth int) error {
	if d.i >= len(d.b) {
		return d.fail("want a value")
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return d.object(depth, func([]byte) error { return d.skip(depth + 1) })
	case c == '[':
		return d.array(depth, func() error { return d.skip(depth + 1) })
	case c == '"':
		_, _, err := d.str()
		return err
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		_, err := d.number()
		return err
	}
	return d.fail("want a value")
}

// stringOrNull reads a string (returned raw, quotes included) or null
// (returned nil); any other value is a type error.
func (d *chunkDecoder) stringOrNull(what string) ([]byte, error) {
	if d.null() {
		return nil, nil
	}
	if !d.is('"') {
		return nil, d.fail(what + " is not a string")
	}
	raw, _, err := d.str()
	return raw, err
}

// intOrNull reads a token count into dst; null leaves dst alone, as
// encoding/json does. A value that is not an integer fitting an int (a
// fraction, an exponent, a string, an object, beyond ±2⁶³) is read and
// validated, sets d.usageBad and leaves 0: a server's claim that cannot be
// a count is flagged by the caller, not a reason to drop the stream.
func (d *chunkDecoder) intOrNull(dst *int, depth int) error {
	if d.null() {
		return nil
	}
	*dst = 0
	if !d.is('-') && !d.digit() {
		d.usageBad = true
		return d.skip(depth)
	}
	raw, err := d.number()
	if err != nil {
		return err
	}
	n, ok := parseInt(raw)
	if !ok {
		d.usageBad = true
		return nil
	}
	*dst = n
	return nil
}

// parseInt parses a JSON number that must be an int: no fraction, no
// exponent, no overflow.
func parseInt(raw []byte) (int, bool) {
	neg := raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	limit := uint64(math.MaxInt)
	if neg {
		limit++
	}
	var n uint64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > (limit-uint64(c-'0'))/10 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		return int(-n), true
	}
	return int(n), true
}

// null reads a null if one is at d.i.
func (d *chunkDecoder) null() bool {
	if bytes.HasPrefix(d.b[d.i:], []byte("null")) {
		d.i += 4
		return true
	}
	return false
}

// literal reads the literal word.
func (d *chunkDecoder) literal(word string) error {
	if !bytes.HasPrefix(d.b[d.i:], []byte(word)) {
		return d.fail("bad literal")
	}
	d.i += len(word)
	return nil
}

// str reads the string at d.i and returns it raw, quotes included, and
// whether it holds escapes.
func (d *chunkDecoder) str() (raw []byte, escaped bool, err error) {
	start := d.i
	d.i++ // '"'
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return d.b[start:d.i], escaped, nil
		case c == '\\':
			escaped = true
			if d.i+1 >= len(d.b) {
				return nil, false, d.fail("cut escape")
			}
			switch d.b[d.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.i += 2
			case 'u':
				if d.i+6 > len(d.b) || hex4(d.b[d.i+2:d.i+6]) < 0 {
					return nil, false, d.fail("bad \\u escape")
				}
				d.i += 6
			default:
				return nil, false, d.fail("bad escape")
			}
		case c < 0x20:
			return nil, false, d.fail("control character in a string")
		default:
			d.i++
		}
	}
	return nil, false, d.fail("unterminated string")
}

// number reads a number by JSON's grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
func (d *chunkDecoder) number() ([]byte, error) {
	start := d.i
	if d.is('-') {
		d.i++
	}
	switch {
	case d.is('0'):
		d.i++
	case d.digit():
		for d.digit() {
			d.i++
		}
	default:
		return nil, d.fail("bad number")
	}
	if d.is('.') {
		d.i++
		if !d.digit() {
			return nil, d.fail("bad fraction")
		}
		for d.digit() {
			d.i++
		}
	}
	if d.is('e') || d.is('E') {
		d.i++
		if d.is('+') || d.is('-') {
			d.i++
		}
		if !d.digit() {
			return nil, d.fail("bad exponent")
		}
		for d.digit() {
			d.i++
		}
	}
	return d.b[start:d.i], nil
}

func (d *chunkDecoder) digit() bool {
	return d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9'
}

// is reports whether the byte at d.i is c.
func (d *chunkDecoder) is(c byte) bool { return d.i < len(d.b) && d.b[d.i] == c }

// ws skips JSON whitespace.
func (d *chunkDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// fail builds the error for the byte at d.i. Errors end the stream, so
// allocating here costs nothing on the per-chunk path.
func (d *chunkDecoder) fail(what string) error {
	return fmt.Errorf("%w: %s at byte %d", errNotChunk, what, d.i)
}

// unescapeKey decodes the escapes of a key into d.keyBuf. Invalid surrogates
// become U+FFFD, as in encoding/json. A key too long for d.keyBuf comes back
// empty, which no field name matches.
func (d *chunkDecoder) unescapeKey(in []byte) []byte {
	if len(in) > keyBufLen-utf8.UTFMax {
		return d.keyBuf[:0]
	}
	out := d.keyBuf[:0]
	for i := 0; i < len(in); {
		c := in[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		switch in[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := rune(hex4(in[i+2 : i+6]))
			i += 6
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 <= len(in) && in[i] == '\\' && in[i+1] == 'u' {
					r2 = rune(hex4(in[i+2 : i+6]))
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, in[i+1])
		}
		i += 2
	}
	return out
}

// hex4 decodes four hex digits, or returns -1.
func hex4(b []byte) int {
	n := 0
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		n = n<<4 | int(c)
	}
	return n
}

// nonEmptyString reports a raw JSON string other than "".
func nonEmptyString(raw []byte) bool {
	return len(raw) > 2 && raw[0] == '"'
}

// unquote decodes a raw JSON string, keeping the raw bytes if it does not
// decode. It runs twice per request (the id, the finish reason), never per
// chunk: a plain string (no escape, no control character, valid UTF-8, what
// engines send) is cut out of its quotes, which is what encoding/json would
// return for it at a tenth of the cost (decision 0602); anything else goes
// through encoding/json.
func unquote(raw []byte) string {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		inner := raw[1 : len(raw)-1]
		plain := utf8.Valid(inner)
		for _, c := range inner {
			if c < 0x20 || c == '\\' || c == '"' {
				plain = false
				break
			}
		}
		if plain {
			return string(inner)
		}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(raw)
	}
	return s
}
