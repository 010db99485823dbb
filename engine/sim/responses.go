package sim

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// OpenAI's Responses API (POST /v1/responses, endpoints.KindResponses), as
// vLLM serves it: the request's input items become the chat messages the
// template renders (instructions first, as a system message), the answer
// is the same planned tokens a chat answer is, sent as typed events
// (`event: <type>` and data with "type" and "sequence_number", no [DONE]):
// response.created and response.in_progress, then per output item
// output_item.added (and content_part.added for text), its deltas
// (reasoning_text, output_text, function_call_arguments), its done events,
// and response.completed — or response.incomplete when max_output_tokens
// cut it — with the usage. A whole response is the response object with
// its output items. Errors before the stream are OpenAI's error bodies, as
// for chat; an error mid-stream is an `error` event.

// EndpointResponses is the Responses endpoint as RequestTruth.Endpoint
// names it.
const EndpointResponses = "/v1/responses"

// responsesRequest is the part of a Responses body the engine reads.
type responsesRequest struct {
	Model           string          `json:"model"`
	Input           json.RawMessage `json:"input"`
	Instructions    *string         `json:"instructions"`
	Stream          bool            `json:"stream"`
	MaxOutputTokens *int            `json:"max_output_tokens"`
	// min_tokens and ignore_eos are engine extensions, as on chat.
	MinTokens  int             `json:"min_tokens"`
	IgnoreEOS  bool            `json:"ignore_eos"`
	RID        json.RawMessage `json:"rid"`
	RequestID  string          `json:"request_id"`
	Tools      []responsesTool `json:"tools"`
	ToolChoice json.RawMessage `json:"tool_choice"`
}

// responsesTool is a Responses tool: a function's name is at the top.
type responsesTool struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// responsesItem is one input item: a message ({"role","content"}, type
// "message" or none), a function call the model made, or its output.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// parseResponsesRequest decodes and checks a Responses body into the chat
// request the rest of the handler serves (its second argument, chat's
// completions flag, is unused): the input as messages, max_output_tokens
// as max_tokens, the tools and tool_choice in chat's shape.
func parseResponsesRequest(body []byte, _ bool) (*chatRequest, error) {
	var rr responsesRequest
	if err := json.Unmarshal(body, &rr); err != nil {
		return nil, badf("invalid JSON body: %v", err)
	}
	msgs, err := responsesMessages(rr.Input)
	if err != nil {
		return nil, err
	}
	if rr.Instructions != nil && *rr.Instructions != "" {
		sys, _ := json.Marshal(*rr.Instructions)
		msgs = append([]chatMessage{{Role: "system", Content: sys}}, msgs...)
	}
	if rr.MaxOutputTokens != nil && *rr.MaxOutputTokens < 1 {
		return nil, badf("max_output_tokens must be at least 1, got %d", *rr.MaxOutputTokens)
	}
	if rr.MinTokens < 0 {
		return nil, badf("min_tokens must be >= 0, got %d", rr.MinTokens)
	}
	req := &chatRequest{Model: rr.Model, Messages: msgs, Stream: rr.Stream, MaxTokens: rr.MaxOutputTokens,
		MinTokens: rr.MinTokens, IgnoreEOS: rr.IgnoreEOS, RID: rr.RID, RequestID: rr.RequestID}
	for _, t := range rr.Tools {
		var c tool
		c.Type = t.Type
		c.Function.Name = t.Name
		req.Tools = append(req.Tools, c)
	}
	req.ToolChoice = responsesToolChoice(rr.ToolChoice)
	return req, nil
}

// responsesToolChoice is a Responses tool_choice in chat's shape:
// {"type":"function","name":N} names the function as chat's
// {"type":"function","function":{"name":N}} does; a string stays.
func responsesToolChoice(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return raw
	}
	var c responsesTool
	if json.Unmarshal(raw, &c) != nil || c.Name == "" {
		return nil
	}
	var ct tool
	ct.Type = "function"
	ct.Function.Name = c.Name
	b, _ := json.Marshal(ct)
	return b
}

// responsesMessages turns the input (a string, or a list of items) into
// chat messages: a string is one user message; a message item keeps its
// role, its content a string or parts whose text (input_text, output_text)
// is joined with a space; a function_call is the assistant's message of
// its arguments, a function_call_output a tool message of its output.
func responsesMessages(raw json.RawMessage) ([]chatMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		return []chatMessage{{Role: "user", Content: raw}}, nil
	}
	var items []responsesItem
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &items) != nil || len(items) == 0 {
		return nil, badf("input must be a string or a non-empty list of items")
	}
	msgs := make([]chatMessage, 0, len(items))
	for i, it := range items {
		switch it.Type {
		case "", "message":
			text, err := responsesText(it.Content)
			if err != nil {
				return nil, badf("input[%d]: %v", i, err)
			}
			msgs = append(msgs, chatMessage{Role: it.Role, Content: text})
		case "function_call":
			args, _ := json.Marshal(it.Arguments)
			msgs = append(msgs, chatMessage{Role: "assistant", Content: args})
		case "function_call_output":
			msgs = append(msgs, chatMessage{Role: "tool", Content: it.Output})
		default:
			return nil, badf("input[%d]: item type %q is not supported (message, function_call, function_call_output)", i, it.Type)
		}
	}
	return msgs, nil
}

// responsesText is a message item's content as chat's string content: a
// string as it is, parts' texts joined with a space.
func responsesText(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return raw, nil // a string or null: messageText reads it (and refuses the rest)
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, badf("invalid content parts: %v", err)
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text", "text":
			texts = append(texts, p.Text)
		default:
			return nil, badf("content part type %q is not supported (input_text, output_text)", p.Type)
		}
	}
	b, _ := json.Marshal(strings.Join(texts, " "))
	return b, nil
}

// responsesID is a response's id: vLLM's resp_ prefix on the id the
// engine made or was sent (chat's chatcmpl- replaced), an SGLang or
// FastDeploy id sent as it is.
func responsesID(chunkID string) string {
	if rest, ok := strings.CutPrefix(chunkID, "chatcmpl-"); ok {
		return "resp_" + rest
	}
	return chunkID
}

// respEvents renders one response's Responses events with plain appends,
// numbering them; it is made once per request.
type respEvents struct {
	head    []byte // {"id":…,"object":"response","created_at":…,"model":…
	rsID    string // the reasoning item's id
	msgID   string // the message item's id
	seq     int    // the next sequence_number
	begun   bool   // response.created went out
	tool    string
	toolID  string
	callID  string
	reasons int // reasoning tokens planned (answer.reasoning)
}

func newRespEvents(id, model string, a *answer) *respEvents {
	ev := &respEvents{rsID: "rs_" + id, msgID: "msg_" + id, reasons: a.reasoning, tool: a.tool}
	h := append([]byte(`{"id":`), appendJSONString(nil, id)...)
	h = append(h, `,"object":"response","created_at":`...)
	h = strconv.AppendInt(h, time.Now().Unix(), 10)
	h = append(h, `,"model":`...)
	ev.head = appendJSONString(h, model)
	if a.tool != "" {
		ev.toolID = "fc_" + strings.TrimPrefix(a.toolID, "call_")
		ev.callID = a.toolID
	}
	return ev
}

// outputIndex is the index of the item after the reasoning.
func (ev *respEvents) outputIndex() int {
	if ev.reasons > 0 {
		return 1
	}
	return 0
}

// open appends an event's start: `event: type`, the data's type and
// sequence number; the caller appends the rest of the object and close.
func (ev *respEvents) open(dst []byte, typ string) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, typ...)
	dst = append(dst, "\ndata: {\"type\":\""...)
	dst = append(dst, typ...)
	dst = strconv.AppendInt(append(dst, `","sequence_number":`...), int64(ev.seq), 10)
	ev.seq++
	return dst
}

func closeEvent(dst []byte) []byte { return append(dst, "}\n\n"...) }

// itemRef appends an item's item_id and output_index members.
func itemRef(dst []byte, id string, index int) []byte {
	dst = append(dst, `,"item_id":`...)
	dst = appendJSONString(dst, id)
	return strconv.AppendInt(append(dst, `,"output_index":`...), int64(index), 10)
}

// response appends the response object in status, with output items of
// an answer of n tokens (when output) and its usage (nil = null).
func (ev *respEvents) response(dst []byte, a *answer, status, reason string, n int, output bool, u []byte) []byte {
	dst = append(dst, ev.head...)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","incomplete_details":`...)
	if reason != "" {
		dst = append(dst, `{"reason":"`...)
		dst = append(dst, reason...)
		dst = append(dst, `"}`...)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"error":null,"output":[`...)
	if output {
		dst = ev.items(dst, a, n)
	}
	dst = append(dst, `],"usage":`...)
	if u == nil {
		return append(dst, "null}"...)
	}
	return append(append(dst, u...), '}')
}

// items appends the output items of an answer of n tokens, completed.
func (ev *respEvents) items(dst []byte, a *answer, n int) []byte {
	r := a.reasoningOf(n)
	if ev.reasons > 0 {
		dst = ev.reasoningItem(dst, a, r, "completed")
		if n > r {
			dst = append(dst, ',')
		}
	}
	if n > r || ev.reasons == 0 {
		dst = ev.answerItem(dst, a, r, n, "completed")
	}
	return dst
}

// reasoningItem appends the reasoning item of r tokens.
func (ev *respEvents) reasoningItem(dst []byte, a *answer, r int, status string) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, ev.rsID)
	dst = append(dst, `,"type":"reasoning","summary":[],"content":[`...)
	if r > 0 {
		dst = append(dst, `{"type":"reasoning_text","text":"`...)
		dst = a.appendWords(dst, 0, r)
		dst = append(dst, `"}`...)
	}
	dst = append(dst, `],"status":"`...)
	dst = append(dst, status...)
	return append(dst, `"}`...)
}

// answerItem appends the message item (or function call) of tokens
// [from, to): empty when in progress.
func (ev *respEvents) answerItem(dst []byte, a *answer, from, to int, status string) []byte {
	if ev.tool == "" {
		dst = append(dst, `{"id":`...)
		dst = appendJSONString(dst, ev.msgID)
		dst = append(dst, `,"type":"message","role":"assistant","status":"`...)
		dst = append(dst, status...)
		dst = append(dst, `","content":[`...)
		if status == "completed" {
			dst = append(dst, `{"type":"output_text","text":"`...)
			dst = a.appendWords(dst, from, to)
			dst = append(dst, `","annotations":[]}`...)
		}
		return append(dst, "]}"...)
	}
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, ev.toolID)
	dst = append(dst, `,"type":"function_call","call_id":`...)
	dst = appendJSONString(dst, ev.callID)
	dst = append(dst, `,"name":`...)
	dst = appendJSONString(dst, ev.tool)
	dst = append(dst, `,"arguments":"`...)
	if status == "completed" {
		dst = append(dst, toolArgsOpen...)
		dst = a.appendWords(dst, from, to)
		dst = append(dst, toolArgsClose...)
	}
	dst = append(dst, `","status":"`...)
	dst = append(dst, status...)
	return append(dst, `"}`...)
}

// tokens appends the events that carry tokens [from, to) of the answer:
// the response's first events before the first token, an item's added
// events before its first token, the reasoning's done events before the
// answer's item.
func (ev *respEvents) tokens(dst []byte, a *answer, from, to int, last bool) []byte {
	if !ev.begun {
		ev.begun = true
		dst = closeEvent(ev.response(append(ev.open(dst, "response.created"), `,"response":`...), a, "in_progress", "", 0, false, nil))
		dst = closeEvent(ev.response(append(ev.open(dst, "response.in_progress"), `,"response":`...), a, "in_progress", "", 0, false, nil))
	}
	if from < a.reasoning {
		if from == 0 {
			dst = ev.itemAdded(dst, 0, func(dst []byte) []byte { return ev.reasoningItem(dst, a, 0, "in_progress") })
			dst = ev.partEvent(dst, "response.content_part.added", true, a, 0, 0)
		}
		r := min(to, a.reasoning)
		dst = ev.delta(dst, "response.reasoning_text.delta", ev.rsID, 0, a, from, r, "", "")
		from = r
	}
	if from >= to {
		return dst
	}
	k := ev.outputIndex()
	if from == a.reasoning {
		if a.reasoning > 0 {
			dst = ev.reasoningDone(dst, a, a.reasoning)
		}
		dst = ev.itemAdded(dst, k, func(dst []byte) []byte { return ev.answerItem(dst, a, 0, 0, "in_progress") })
		if ev.tool == "" {
			dst = ev.partEvent(dst, "response.content_part.added", false, a, 0, 0)
		}
	}
	if ev.tool == "" {
		return ev.delta(dst, "response.output_text.delta", ev.msgID, k, a, from, to, "", "")
	}
	open, closing := "", ""
	if from == a.reasoning {
		open = toolArgsOpen
	}
	if last {
		closing = toolArgsClose
	}
	return ev.delta(dst, "response.function_call_arguments.delta", ev.toolID, k, a, from, to, open, closing)
}

// itemAdded appends output_item.added of the item item renders.
func (ev *respEvents) itemAdded(dst []byte, index int, item func([]byte) []byte) []byte {
	dst = strconv.AppendInt(append(ev.open(dst, "response.output_item.added"), `,"output_index":`...), int64(index), 10)
	return closeEvent(item(append(dst, `,"item":`...)))
}

// delta appends a delta event of tokens [from, to), between open and
// closing (a tool call's JSON around its words).
func (ev *respEvents) delta(dst []byte, typ, itemID string, index int, a *answer, from, to int, open, closing string) []byte {
	dst = itemRef(ev.open(dst, typ), itemID, index)
	if typ != "response.function_call_arguments.delta" {
		dst = append(dst, `,"content_index":0`...)
	}
	dst = append(dst, `,"delta":"`...)
	dst = append(dst, open...)
	dst = a.appendWords(dst, from, to)
	dst = append(dst, closing...)
	if typ == "response.output_text.delta" {
		dst = append(dst, `","logprobs":[]`...)
		return closeEvent(dst)
	}
	return closeEvent(append(dst, '"'))
}

// partEvent appends content_part.added or .done of the message's text
// [from, to), or with reasoning of the reasoning item's.
func (ev *respEvents) partEvent(dst []byte, typ string, reasoning bool, a *answer, from, to int) []byte {
	if reasoning {
		dst = itemRef(ev.open(dst, typ), ev.rsID, 0)
		dst = append(dst, `,"content_index":0,"part":{"type":"reasoning_text","text":"`...)
		dst = a.appendWords(dst, from, to)
		return closeEvent(append(dst, `"}`...))
	}
	dst = itemRef(ev.open(dst, typ), ev.msgID, ev.outputIndex())
	dst = append(dst, `,"content_index":0,"part":{"type":"output_text","text":"`...)
	dst = a.appendWords(dst, from, to)
	return closeEvent(append(dst, `","annotations":[]}`...))
}

// reasoningDone appends the reasoning's done events, r tokens long.
func (ev *respEvents) reasoningDone(dst []byte, a *answer, r int) []byte {
	dst = itemRef(ev.open(dst, "response.reasoning_text.done"), ev.rsID, 0)
	dst = append(dst, `,"content_index":0,"text":"`...)
	dst = a.appendWords(dst, 0, r)
	dst = closeEvent(append(dst, '"'))
	dst = ev.partEvent(dst, "response.content_part.done", true, a, 0, r)
	dst = append(ev.open(dst, "response.output_item.done"), `,"output_index":0,"item":`...)
	return closeEvent(ev.reasoningItem(dst, a, r, "completed"))
}

// end appends the events after the last tokens of an answer of n tokens
// that the engine ended with reason: the open item's done events, then
// response.completed, or response.incomplete when the length ran out,
// with usage u; no terminal event when omit (faults.missing_done).
func (ev *respEvents) end(dst []byte, a *answer, reason string, n int, u []byte, omit bool) []byte {
	r := a.reasoningOf(n)
	k := ev.outputIndex()
	switch {
	case n == 0:
	case n <= r: // the answer ended within the reasoning, or with it
		dst = ev.reasoningDone(dst, a, r)
	case ev.tool == "":
		dst = itemRef(ev.open(dst, "response.output_text.done"), ev.msgID, k)
		dst = append(dst, `,"content_index":0,"text":"`...)
		dst = a.appendWords(dst, r, n)
		dst = closeEvent(append(dst, `","logprobs":[]`...))
		dst = ev.partEvent(dst, "response.content_part.done", false, a, r, n)
		dst = strconv.AppendInt(append(ev.open(dst, "response.output_item.done"), `,"output_index":`...), int64(k), 10)
		dst = closeEvent(ev.answerItem(append(dst, `,"item":`...), a, r, n, "completed"))
	default:
		dst = itemRef(ev.open(dst, "response.function_call_arguments.done"), ev.toolID, k)
		dst = append(dst, `,"name":`...)
		dst = appendJSONString(dst, ev.tool)
		dst = append(dst, `,"arguments":"`+toolArgsOpen...)
		dst = a.appendWords(dst, r, n)
		dst = closeEvent(append(dst, toolArgsClose+`"`...))
		dst = strconv.AppendInt(append(ev.open(dst, "response.output_item.done"), `,"output_index":`...), int64(k), 10)
		dst = closeEvent(ev.answerItem(append(dst, `,"item":`...), a, r, n, "completed"))
	}
	if omit {
		return dst
	}
	typ, status, why := "response.completed", "completed", ""
	if reason == batch.FinishLength {
		typ, status, why = "response.incomplete", "incomplete", "max_output_tokens"
	}
	dst = append(ev.open(dst, typ), `,"response":`...)
	return closeEvent(ev.response(dst, a, status, why, n, true, u))
}

// whole appends the non-streamed response of an answer of n tokens.
func (ev *respEvents) whole(dst []byte, a *answer, reason string, n int, u []byte) []byte {
	status, why := "completed", ""
	if reason == batch.FinishLength {
		status, why = "incomplete", "max_output_tokens"
	}
	return append(ev.response(dst, a, status, why, n, true, u), '\n')
}

// errorEvent appends the error event of a stream that fails mid-way.
func (ev *respEvents) errorEvent(dst []byte, msg string) []byte {
	dst = append(ev.open(dst, "error"), `,"code":"server_error","message":`...)
	dst = appendJSONString(dst, msg)
	return closeEvent(append(dst, `,"param":null`...))
}

// finishReason is what a Responses client is told when the engine ended
// the answer of n tokens with reason: a length cut stays length (status
// incomplete) even within a function call, which chat reports as
// tool_calls.
func (ev *respEvents) finishReason(a *answer, reason string, n int) string {
	if a.calls(n) && reason != batch.FinishLength {
		return finishToolCalls
	}
	return reason
}

// responsesJSON renders a usage as the Responses API's.
func (u usage) responsesJSON(dst []byte) []byte {
	dst = strconv.AppendInt(append(dst, `{"input_tokens":`...), int64(u.prompt), 10)
	dst = strconv.AppendInt(append(dst, `,"input_tokens_details":{"cached_tokens":`...), int64(u.cached), 10)
	dst = strconv.AppendInt(append(dst, `},"output_tokens":`...), int64(u.completion), 10)
	dst = strconv.AppendInt(append(dst, `,"output_tokens_details":{"reasoning_tokens":`...), int64(u.reasoning), 10)
	dst = strconv.AppendInt(append(dst, `},"total_tokens":`...), int64(u.prompt+u.completion), 10)
	return append(dst, '}')
}

// respEnd is appendEnd for a Responses stream: the done events and the
// terminal event with the usage (payload faults do not apply).
func (sw *sseWriter) respEnd(buf []byte, reason string, written int) []byte {
	u := sw.e.usageOf(sw.s, written).responsesJSON(nil)
	return sw.s.ans.events.end(buf, &sw.s.ans, reason, written, u, sw.faults.missingDone)
}

// parserOf is the body parser of an endpoint kind: the Responses API's
// body is read into the chat request the handler serves.
func parserOf(kind endpoints.Kind) func(body []byte, completions bool) (*chatRequest, error) {
	if kind == endpoints.KindResponses {
		return parseResponsesRequest
	}
	return parseChatRequest
}

// payloadDrawOf is payloadDraw for a request of kind: none on the
// Responses API's events (its content is no parts array, it has no
// choices, its usage comes once).
func (e *Engine) payloadDrawOf(kind endpoints.Kind, t *RequestTruth, stream, completions bool) payloadDraw {
	if kind == endpoints.KindResponses {
		return payloadDraw{}
	}
	return e.payloadDraw(t, stream, completions)
}

// renderAs makes a chat request's stream one of kind: for the Responses
// API its id resp_…, one output sequence (no choices, no content parts),
// the answer rendered as events. Other kinds are left as they are.
func (e *Engine) renderAs(kind endpoints.Kind, t *RequestTruth, s *stream) {
	if kind != endpoints.KindResponses {
		return
	}
	t.ChunkID = responsesID(t.ChunkID)
	s.chunkID = t.ChunkID
	s.ans.choices, s.ans.parts = 0, false
	s.ans.events = newRespEvents(t.ChunkID, e.cfg.Model, &s.ans)
}
