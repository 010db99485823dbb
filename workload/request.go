// Package workload turns a scenario into a deterministic plan of requests and
// drives it: arrival processes (pacers), datasets and length distributions, and
// the Driver that hands each request to a Sender at its time. It knows nothing
// of HTTP: the CLI fills the Sender with the client.
package workload

import (
	"context"
	"time"
)

// Message is one chat message of a request. An agentic replay's history
// also holds the engine's tool calls (an assistant message) and the tool
// results that answer them (a tool message).
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCallID string     `json:"tool_call_id,omitempty"` // a tool message: the call it answers
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`   // an assistant message: the calls the engine made
	// Images go with the text as the chat API's image_url parts
	// (images.go); the plan names them, their bytes are made when sent.
	Images []Image `json:"images,omitempty"`
}

// ToolCall is one function call an engine's reply made, as the chat API
// carries it.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function ToolFunction `json:"function"`
}

// ToolFunction is a tool call's function and its arguments (JSON text).
type ToolFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Request is one planned request: what to send and when.
type Request struct {
	ID       string        `json:"id"`          // unique per run; sent as X-Request-Id and the dialect's id field
	Index    int           `json:"index"`       // position in the plan
	Phase    string        `json:"phase"`       // the phase it belongs to
	Intended time.Duration `json:"intended_ns"` // intended send time on the run clock (0 in closed loop: "as soon as a user is free")

	Messages     []Message `json:"messages"`
	PromptTokens int       `json:"prompt_tokens"` // the prompt length the dataset aimed for (the server's count is authoritative)
	MaxTokens    int       `json:"max_tokens"`
	MinTokens    int       `json:"min_tokens,omitempty"`
	IgnoreEOS    bool      `json:"ignore_eos,omitempty"` // ask the engine to generate exactly MaxTokens
	// Session is the agentic session the request belongs to, sent in the
	// session-affinity headers so a router keeps it on one replica; ""
	// for requests of no session.
	Session string `json:"session,omitempty"`
	// KeepReply asks the Sender for the engine's reply in Outcome.Reply:
	// the session's next call is threaded with it.
	KeepReply bool `json:"keep_reply,omitempty"`
}

// Sender sends one request and returns when it is finished, whatever the
// outcome: failures are data recorded by the Sender, not errors of the Driver.
type Sender interface {
	Send(ctx context.Context, r Request)
}

// SenderFunc lets a plain function act as a Sender.
type SenderFunc func(ctx context.Context, r Request)

// Send calls f.
func (f SenderFunc) Send(ctx context.Context, r Request) { f(ctx, r) }
