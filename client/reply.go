package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
)

// An agentic replay threads each session with the replies the engine
// actually gave (docs/decisions/1600-agentic-trace-replay.md): the client
// keeps the response's data lines as they come — one copy into a buffer
// sized up front, nothing decoded on the per-chunk path — and decodes the
// reply from them once the request is over.

// Reply is the assistant message an engine returned: its text and the
// tool calls it made (reasoning is not part of it: a chat history does not
// carry it back).
type Reply struct {
	Content   string
	ToolCalls []ToolCall
}

// ToolCall is one function call of a reply, as the chat API writes it in
// an assistant message.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function ToolFunction `json:"function"`
}

// ToolFunction is a tool call's function name and its arguments (JSON text).
type ToolFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// DoReply is Do, also returning the reply the engine gave (nil when the
// request failed, or the reply was more than maxBodyBytes of data lines).
func (c *Client) DoReply(ctx context.Context, r Request) (Record, *Reply) {
	return c.do(ctx, r, true)
}

// SessionIDHeader carries Request.Session on every request of a session.
const SessionIDHeader = "X-Session-Id"

// setSessionHeaders sends the request's session in X-Session-Id and
// Config.SessionHeader, when it has one.
func (c *Client) setSessionHeaders(h http.Header, session string) {
	if session == "" {
		return
	}
	h.Set(SessionIDHeader, session)
	if c.cfg.SessionHeader != "" {
		h.Set(c.cfg.SessionHeader, session)
	}
}

// replyKeeper holds a response's data lines while the reply is wanted.
type replyKeeper struct {
	on   bool
	over bool // the lines ran past maxBodyBytes: no reply
	raw  []byte
}

// maxReplyToolCalls bounds the tool calls a reply is kept with: an index
// beyond it (a hostile one, 1e9) would otherwise size the list.
const maxReplyToolCalls = 64

// replyBytesPerToken sizes the buffer up front: a streamed chunk of one
// token is some 150 to 250 bytes of JSON.
const replyBytesPerToken = 256

// want turns the keeper on for a request of maxTokens.
func (k *replyKeeper) want(on bool, maxTokens int) {
	k.on = on
	if on {
		k.raw = make([]byte, 0, min(max(maxTokens, 16)*replyBytesPerToken, 4<<20))
	}
}

// add keeps one data line (or a whole response).
func (k *replyKeeper) add(data []byte) {
	if !k.on || k.over {
		return
	}
	if len(k.raw)+len(data)+1 > maxBodyBytes {
		k.over, k.raw = true, nil
		return
	}
	k.raw = append(append(k.raw, data...), '\n')
}

// message decodes the reply of a request that succeeded.
func (k *replyKeeper) message(rec *Record) *Reply {
	if !k.on || k.over || !rec.OK() {
		return nil
	}
	return decodeReply(k.raw)
}

// replyChunk is the part of a chunk (or a whole response) a reply is made of.
type replyChunk struct {
	Choices []struct {
		Index   int           `json:"index"`
		Delta   *replyMessage `json:"delta"`
		Message *replyMessage `json:"message"`
		Text    *string       `json:"text"`
	} `json:"choices"`
}

type replyMessage struct {
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		Index    *int   `json:"index"`
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// decodeReply joins the first choice's text and tool calls over the kept
// lines: text deltas appended, a tool call's deltas merged by its index
// (its id, type and name from the first that has them, its arguments
// appended). Lines that are not such chunks are passed over.
func decodeReply(raw []byte) *Reply {
	var text bytes.Buffer
	var calls []ToolCall
	for line := range bytes.Lines(raw) {
		var ch replyChunk
		if json.Unmarshal(line, &ch) != nil {
			continue
		}
		for _, c := range ch.Choices {
			if c.Index != 0 {
				continue
			}
			if c.Text != nil {
				text.WriteString(*c.Text)
			}
			m := c.Delta
			if m == nil {
				m = c.Message
			}
			if m == nil {
				continue
			}
			text.WriteString(contentText(m.Content))
			for pos, tc := range m.ToolCalls {
				i := pos
				if tc.Index != nil {
					i = *tc.Index
				}
				if i < 0 || i >= maxReplyToolCalls {
					continue
				}
				for len(calls) <= i {
					calls = append(calls, ToolCall{Type: "function"})
				}
				call := &calls[i]
				if call.ID == "" {
					call.ID = tc.ID
				}
				if tc.Type != "" {
					call.Type = tc.Type
				}
				if call.Function.Name == "" {
					call.Function.Name = tc.Function.Name
				}
				call.Function.Arguments += tc.Function.Arguments
			}
		}
	}
	return &Reply{Content: text.String(), ToolCalls: calls}
}

// contentText is a content value's text: a string, or the text of an array
// of parts; "" for null or anything else.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b bytes.Buffer
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
