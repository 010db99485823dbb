package client

import "time"

// Message is one chat message of a request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
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
}
