package sim

import (
	"strconv"
)

// answer is the plan of one response's generated tokens: token i is the
// word genWord(base, i); tokens [0, reasoning) are reasoning, the rest are
// content, or the arguments of a call of tool when it is set.
type answer struct {
	base      uint64
	reasoning int    // reasoning tokens at most (the output may be shorter)
	tool      string // the called function ("" = content)
	toolID    string
	parts     bool // content as an array of parts (faults.payload.content_parts)
	choices   int  // choices sent (faults.payload.choices); 0 = one
	// events, when set, renders the answer as the Responses API's events
	// (responses.go).
	events *respEvents
}

// choiceCount is how many choices the answer is sent in.
func (a *answer) choiceCount() int { return max(a.choices, 1) }

// openContent and closeContent wrap content text as a string, or as an
// array of one text part.
func (a *answer) openContent(dst []byte) []byte {
	if a.parts {
		return append(dst, `"content":[{"type":"text","text":"`...)
	}
	return append(dst, `"content":"`...)
}

func (a *answer) closeContent(dst []byte) []byte {
	if a.parts {
		return append(dst, `"}]`...)
	}
	return append(dst, '"')
}

// reasoningOf is how many of n generated tokens are reasoning.
func (a *answer) reasoningOf(n int) int { return min(a.reasoning, n) }

// calls reports whether an answer of n tokens carries a tool call.
func (a *answer) calls(n int) bool { return a.tool != "" && n > a.reasoning }

// finishReason is what the client is told when the engine ended the
// answer of n tokens with reason.
func (a *answer) finishReason(reason string, n int) string {
	if a.events != nil {
		return a.events.finishReason(a, reason, n)
	}
	if a.calls(n) {
		return finishToolCalls
	}
	return reason
}

// finishToolCalls is the finish reason of an answer that called a tool.
const finishToolCalls = "tool_calls"

// toolArgsOpen and toolArgsClose wrap a tool call's words into the JSON
// arguments {"input":" w1 w2 ..."}, as they appear inside a JSON string.
const (
	toolArgsOpen  = `{\"input\":\"`
	toolArgsClose = `\"}`
)

func (a *answer) appendWords(dst []byte, from, to int) []byte {
	for i := from; i < to; i++ {
		dst = append(dst, genWord(a.base, i)...)
	}
	return dst
}

// appendDelta appends the delta object of tokens [from, to); last says that
// to is the end of the answer (a tool call's arguments close there).
func (a *answer) appendDelta(dst []byte, from, to int, last bool) []byte {
	dst = append(dst, '{')
	if from < a.reasoning {
		r := min(to, a.reasoning)
		dst = append(dst, `"reasoning_content":"`...)
		dst = a.appendWords(dst, from, r)
		dst = append(dst, '"')
		if r < to {
			dst = append(dst, ',')
		}
		from = r
	}
	if from < to {
		if a.tool == "" {
			dst = a.openContent(dst)
			dst = a.appendWords(dst, from, to)
			dst = a.closeContent(dst)
		} else {
			dst = append(dst, `"tool_calls":[{"index":0,`...)
			if from == a.reasoning {
				dst = append(dst, `"id":`...)
				dst = appendJSONString(dst, a.toolID)
				dst = append(dst, `,"type":"function","function":{"name":`...)
				dst = appendJSONString(dst, a.tool)
				dst = append(dst, `,"arguments":"`+toolArgsOpen...)
			} else {
				dst = append(dst, `"function":{"arguments":"`...)
			}
			dst = a.appendWords(dst, from, to)
			if last {
				dst = append(dst, toolArgsClose...)
			}
			dst = append(dst, `"}}]`...)
		}
	}
	return append(dst, '}')
}

// appendMessage appends the message object of a whole answer of n tokens.
func (a *answer) appendMessage(dst []byte, n int) []byte {
	r := a.reasoningOf(n)
	dst = append(dst, `{"role":"assistant",`...)
	if a.reasoning > 0 {
		dst = append(dst, `"reasoning_content":"`...)
		dst = a.appendWords(dst, 0, r)
		dst = append(dst, `",`...)
	}
	if !a.calls(n) {
		dst = a.openContent(dst)
		dst = a.appendWords(dst, r, n)
		return append(a.closeContent(dst), '}')
	}
	dst = append(dst, `"content":null,"tool_calls":[{"id":`...)
	dst = appendJSONString(dst, a.toolID)
	dst = append(dst, `,"type":"function","function":{"name":`...)
	dst = appendJSONString(dst, a.tool)
	dst = append(dst, `,"arguments":"`+toolArgsOpen...)
	dst = a.appendWords(dst, r, n)
	return append(dst, toolArgsClose+`"}}]}`...)
}

// encoder renders the SSE chunks (or the whole body) of one response with
// plain appends: the per-token path must stay cheap (engine speed goal), and
// every value that needs escaping (id, model) is escaped once up front. Two
// layouts: OpenAI's (SGLang, vLLM, FastDeploy: id first, "usage": null in
// every chunk) and llama.cpp's (choices first, system_fingerprint, no null
// usage, a timings object at the end).
type encoder struct {
	llama       bool
	completions bool   // /v1/completions: choices carry text, no role chunk
	head        []byte // up to and including `"choices":[`
	tail        []byte // from the choices' closing `]` to before usage

	// msgs is set for the Messages API, which renders every event itself (messages.go).
	msgs *messagesEncoder
}

func newEncoder(id, model string, created int64, llama, completions, stream bool) encoder {
	object := "chat.completion"
	switch {
	case completions:
		object = "text_completion"
	case stream:
		object = "chat.completion.chunk"
	}
	var h, t []byte
	if stream {
		h = append(h, "data: "...)
	}
	if !llama {
		h = append(h, `{"id":`...)
		h = appendJSONString(h, id)
		h = append(h, `,"object":"`...)
		h = append(h, object...)
		h = append(h, `","created":`...)
		h = strconv.AppendInt(h, created, 10)
		h = append(h, `,"model":`...)
		h = appendJSONString(h, model)
		h = append(h, `,"choices":[`...)
		t = append(t, ']')
		return encoder{head: h, tail: t, completions: completions}
	}
	h = append(h, `{"choices":[`...)
	t = append(t, `],"created":`...)
	t = strconv.AppendInt(t, created, 10)
	if !completions {
		t = append(t, `,"id":`...)
		t = appendJSONString(t, id)
	}
	t = append(t, `,"model":`...)
	t = appendJSONString(t, model)
	t = append(t, `,"system_fingerprint":"b0-unknown","object":"`...)
	t = append(t, object...)
	t = append(t, '"')
	if completions {
		t = append(t, `,"id":`...)
		t = appendJSONString(t, id)
	}
	return encoder{llama: true, completions: completions, head: h, tail: t}
}

// choiceOpen and choiceClose wrap a choice's payload (the delta, message or
// text member) with its index and finish_reason ("" = null).
func (c *encoder) choiceOpen(dst []byte, index int, reason string) []byte {
	if c.llama {
		if c.completions {
			return append(dst, `{"text":`...)
		}
		dst = append(dst, `{"finish_reason":`...)
		dst = appendReason(dst, reason)
		dst = strconv.AppendInt(append(dst, `,"index":`...), int64(index), 10)
		return append(dst, ',')
	}
	dst = strconv.AppendInt(append(dst, `{"index":`...), int64(index), 10)
	if c.completions {
		return append(dst, `,"text":`...)
	}
	return append(dst, ',')
}

func (c *encoder) choiceClose(dst []byte, index int, reason string) []byte {
	if c.llama {
		if c.completions {
			dst = strconv.AppendInt(append(dst, `,"index":`...), int64(index), 10)
			dst = append(dst, `,"logprobs":null,"finish_reason":`...)
			dst = appendReason(dst, reason)
		}
		return append(dst, '}')
	}
	dst = append(dst, `,"logprobs":null,"finish_reason":`...)
	dst = appendReason(dst, reason)
	return append(dst, '}')
}

func appendReason(dst []byte, reason string) []byte {
	if reason == "" {
		return append(dst, "null"...)
	}
	return appendJSONString(dst, reason)
}

// end closes a chunk or body: usage (nil = none; OpenAI's layout says null)
// and llama.cpp's timings (nil = none).
func (c *encoder) end(dst []byte, u, timings []byte, stream bool) []byte {
	dst = append(dst, c.tail...)
	switch {
	case u != nil:
		dst = append(dst, `,"usage":`...)
		dst = append(dst, u...)
	case !c.llama:
		dst = append(dst, `,"usage":null`...)
	}
	if timings != nil {
		dst = append(dst, `,"timings":`...)
		dst = append(dst, timings...)
	}
	if stream {
		return append(dst, "}\n\n"...)
	}
	return append(dst, "}\n"...)
}

// role appends the first chunk of a chat stream's choice: the assistant
// role.
func (c *encoder) role(dst []byte, index int, u []byte) []byte {
	if c.msgs != nil {
		return c.msgs.start(dst)
	}
	dst = append(dst, c.head...)
	dst = c.choiceOpen(dst, index, "")
	if c.llama {
		dst = append(dst, `"delta":{"role":"assistant","content":null}`...)
	} else {
		dst = append(dst, `"delta":{"role":"assistant","content":""}`...)
	}
	dst = c.choiceClose(dst, index, "")
	return c.end(dst, u, nil, true)
}

// tokens appends a chunk carrying tokens [from, to) of the answer, for
// choice index.
func (c *encoder) tokens(dst []byte, a *answer, index, from, to int, last bool, u []byte) []byte {
	if a.events != nil {
		return a.events.tokens(dst, a, from, to, last)
	}
	if c.msgs != nil {
		return c.msgs.tokens(dst, from, to, last)
	}
	dst = append(dst, c.head...)
	dst = c.choiceOpen(dst, index, "")
	if c.completions {
		dst = append(dst, '"')
		dst = a.appendWords(dst, from, to)
		dst = append(dst, '"')
	} else {
		dst = append(dst, `"delta":`...)
		dst = a.appendDelta(dst, from, to, last)
	}
	dst = c.choiceClose(dst, index, "")
	return c.end(dst, u, nil, true)
}

// finish appends the chunk with choice index's finish reason.
func (c *encoder) finish(dst []byte, index int, reason string, u, timings []byte) []byte {
	if c.msgs != nil {
		return c.msgs.finish(dst, reason)
	}
	dst = append(dst, c.head...)
	dst = c.choiceOpen(dst, index, reason)
	if c.completions {
		dst = append(dst, `""`...)
	} else {
		dst = append(dst, `"delta":{}`...)
	}
	dst = c.choiceClose(dst, index, reason)
	return c.end(dst, u, timings, true)
}

// usage appends the usage chunk (no choices).
func (c *encoder) usage(dst []byte, u, timings []byte) []byte {
	if c.msgs != nil {
		return dst // the Messages API's usage is in message_start and message_delta
	}
	dst = append(dst, c.head...)
	return c.end(dst, u, timings, true)
}

// whole appends a non-streamed response of an answer of n tokens, in
// each of choices.
func (c *encoder) whole(dst []byte, a *answer, n, choices int, reason string, u, timings []byte) []byte {
	if c.msgs != nil {
		return c.msgs.whole(dst, n, reason)
	}
	dst = append(dst, c.head...)
	for i := range max(choices, 1) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = c.choiceOpen(dst, i, reason)
		if c.completions {
			dst = append(dst, '"')
			dst = a.appendWords(dst, 0, n)
			dst = append(dst, '"')
		} else {
			dst = append(dst, `"message":`...)
			dst = a.appendMessage(dst, n)
		}
		dst = c.choiceClose(dst, i, reason)
	}
	return c.end(dst, u, timings, false)
}

// done is the stream's last event: [DONE], or the Messages API's message_stop.
func (c *encoder) done() []byte {
	if c.msgs != nil {
		return messageStop
	}
	return sseDone
}

var (
	sseDone = []byte("data: [DONE]\n\n")
	ssePing = []byte(": ping\n\n")
)

// usage is a response's token accounting.
type usage struct {
	prompt, completion, cached int
	reasoning                  int
	details                    bool // add completion_tokens_details
}

// times is the usage of choices choices, each of this usage's output: the
// prompt once, the completion (and reasoning) of every choice.
func (u usage) times(choices int) usage {
	choices = max(choices, 1)
	u.completion *= choices
	u.reasoning *= choices
	return u
}

func (u usage) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.prompt), 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.completion), 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.prompt+u.completion), 10)
	dst = append(dst, `,"prompt_tokens_details":{"cached_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.cached), 10)
	dst = append(dst, '}')
	if u.details {
		dst = append(dst, `,"completion_tokens_details":{"reasoning_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.reasoning), 10)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// appendTimings renders the timings object as llama.cpp does (the build of
// decision 2200): the generation rates count steps, each token but the
// first (the prompt's last pass gives it), and a ratio whose divisor is 0
// is 0.
func appendTimings(dst []byte, cacheN, promptN int, promptMS float64, predictedN int, predictedMS float64) []byte {
	ratio := func(dst []byte, a, b float64) []byte {
		if b <= 0 {
			return append(dst, '0')
		}
		return strconv.AppendFloat(dst, a/b, 'g', -1, 64)
	}
	steps := float64(max(predictedN-1, 0))
	dst = append(dst, `{"cache_n":`...)
	dst = strconv.AppendInt(dst, int64(cacheN), 10)
	dst = append(dst, `,"prompt_n":`...)
	dst = strconv.AppendInt(dst, int64(promptN), 10)
	dst = append(dst, `,"prompt_ms":`...)
	dst = strconv.AppendFloat(dst, promptMS, 'g', -1, 64)
	dst = append(dst, `,"prompt_per_token_ms":`...)
	dst = ratio(dst, promptMS, float64(promptN))
	dst = append(dst, `,"prompt_per_second":`...)
	dst = ratio(dst, 1e3*float64(promptN), promptMS)
	dst = append(dst, `,"predicted_n":`...)
	dst = strconv.AppendInt(dst, int64(predictedN), 10)
	dst = append(dst, `,"predicted_ms":`...)
	dst = strconv.AppendFloat(dst, predictedMS, 'g', -1, 64)
	dst = append(dst, `,"predicted_per_token_ms":`...)
	dst = ratio(dst, predictedMS, steps)
	dst = append(dst, `,"predicted_per_second":`...)
	dst = ratio(dst, 1e3*steps, predictedMS)
	return append(dst, '}')
}
