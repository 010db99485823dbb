package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The per-chunk path reads go-openai's raw data line (RecvRaw) and decodes
// only the fields a Record needs into one value reused for the whole stream.
// json.RawMessage fields reuse their backing arrays, so a steady stream
// decodes without allocating; go-openai's own Recv would decode the whole
// ChatCompletionStreamResponse and allocate every string of every chunk.

// wireChunk is the part of a chat.completion.chunk the client reads.
type wireChunk struct {
	ID      json.RawMessage `json:"id"`
	Choices []wireChoice    `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
}

type wireChoice struct {
	Delta        wireDelta       `json:"delta"`
	FinishReason json.RawMessage `json:"finish_reason"`
}

// wireDelta holds the fields that carry generated text: content, and the
// reasoning text of thinking models (vLLM and SGLang name it
// reasoning_content; newer vLLM reasoning). All are generated tokens.
type wireDelta struct {
	Content          json.RawMessage `json:"content"`
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
}

// wireUsage is the usage object.
type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// chunkView is what one chunk said, valid until the next decode.
type chunkView struct {
	id       []byte     // the raw JSON string of the chunk's id, nil when absent or empty
	content  bool       // a choice carried generated text
	finish   []byte     // the raw JSON string of the first finish_reason, nil when none
	usage    *wireUsage // nil when the chunk carried no usage
	hasUsage bool
}

// chunkDecoder decodes the chunks of one stream.
type chunkDecoder struct {
	w wireChunk
	u wireUsage
}

// errNotChunk marks a data line that is not a chat completion chunk.
var errNotChunk = errors.New("not a chat completion chunk")

// decode reads one data line (the JSON after `data:`).
func (d *chunkDecoder) decode(data []byte) (chunkView, error) {
	var v chunkView
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return v, errNotChunk
	}
	d.reset()
	if err := json.Unmarshal(data, &d.w); err != nil {
		return v, fmt.Errorf("%w: %w", errNotChunk, err)
	}
	if !stringOrNull(d.w.ID) {
		return v, fmt.Errorf("%w: id is not a string", errNotChunk)
	}
	if nonEmptyString(d.w.ID) {
		v.id = d.w.ID
	}
	for i := range d.w.Choices {
		ch := &d.w.Choices[i]
		if !stringOrNull(ch.FinishReason) || !stringOrNull(ch.Delta.Content) ||
			!stringOrNull(ch.Delta.ReasoningContent) || !stringOrNull(ch.Delta.Reasoning) {
			return v, fmt.Errorf("%w: choice %d: content or finish_reason is not a string", errNotChunk, i)
		}
		if nonEmptyString(ch.Delta.Content) || nonEmptyString(ch.Delta.ReasoningContent) || nonEmptyString(ch.Delta.Reasoning) {
			v.content = true
		}
		if v.finish == nil && nonEmptyString(ch.FinishReason) {
			v.finish = ch.FinishReason
		}
	}
	if !isNull(d.w.Usage) {
		if d.w.Usage[0] != '{' {
			return v, fmt.Errorf("%w: usage is not an object", errNotChunk)
		}
		if err := json.Unmarshal(d.w.Usage, &d.u); err != nil {
			return v, fmt.Errorf("%w: usage: %w", errNotChunk, err)
		}
		v.usage, v.hasUsage = &d.u, true
	}
	return v, nil
}

// reset clears the reused value, keeping its backing arrays. encoding/json
// neither clears a field whose key is absent nor zeroes a reused slice
// element, so without this one chunk's content would leak into the next.
func (d *chunkDecoder) reset() {
	d.w.ID = d.w.ID[:0]
	d.w.Usage = d.w.Usage[:0]
	all := d.w.Choices[:cap(d.w.Choices)]
	for i := range all {
		ch := &all[i]
		ch.FinishReason = ch.FinishReason[:0]
		ch.Delta.Content = ch.Delta.Content[:0]
		ch.Delta.ReasoningContent = ch.Delta.ReasoningContent[:0]
		ch.Delta.Reasoning = ch.Delta.Reasoning[:0]
	}
	d.w.Choices = d.w.Choices[:0]
	d.u = wireUsage{}
}

// isNull reports an absent value or JSON null.
func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// stringOrNull reports an absent value, null, or a JSON string.
func stringOrNull(raw json.RawMessage) bool {
	return isNull(raw) || raw[0] == '"'
}

// nonEmptyString reports a JSON string other than "".
func nonEmptyString(raw json.RawMessage) bool {
	return len(raw) > 2 && raw[0] == '"'
}

// unquote decodes a JSON string, keeping raw bytes if it does not decode.
func unquote(raw []byte) string {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(raw)
	}
	return s
}
