package endpoints

// messages is Anthropic's Messages API, as Anthropic serves it and as
// vLLM's and llama.cpp's Anthropic-compatible entrypoints do: the messages
// go as they are (a system message as the top-level "system"), the engine
// renders them with its chat template; answers are typed events
// (message_start … message_stop) or a message object with content blocks.
var messages = Endpoint{
	Name:     Messages,
	Path:     MessagesPath,
	Kind:     KindMessages,
	Reserved: "messages",
	Keeps:    "content blocks' deltas (streamed) or content: text, thinking, tool_use input; usage from message_start and message_delta; stop_reason",
}

// The Messages endpoint's name and path.
const (
	Messages     = "messages"
	MessagesPath = "/messages"
)
