package client

import "time"

// Message is one chat message of a request; an agentic session's history
// also holds the engine's tool calls and the tool results answering them.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCallID string     `json:"tool_call_id,omitempty"` // a tool message: the call it answers
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`   // an assistant message: the calls it made
	// ImageURLs are sent after Content as image_url parts (a data: URL or
	// any URL the engine fetches); with none, content stays a string.
	ImageURLs []string `json:"-"`
}

// Request is what the client sends: one request of a plan, in the client's own
// terms, so that the client needs nothing of the package that planned it.
type Request struct {
	ID       string        // unique per run; sent as X-Request-Id and the dialect's id field
	Index    int           // position in the plan
	Phase    string        // the phase it belongs to
	Intended time.Duration // intended send time on the run clock (0 in closed loop)

	Messages     []Message
	PromptTokens int // the prompt length aimed for (the server's count is authoritative)
	MaxTokens    int
	MinTokens    int
	IgnoreEOS    bool // ask the engine to generate exactly MaxTokens
	// Session is the agentic session the request belongs to: sent as
	// X-Session-Id (and Config.SessionHeader) so that a router keeps the
	// session on one replica, and kept in the Record.
	Session string
}
