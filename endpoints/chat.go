package endpoints

// chat is OpenAI's chat completions: the messages go as they are, the
// engine renders them with its chat template.
var chat = Endpoint{
	Name:     Chat,
	Path:     ChatPath,
	Kind:     KindChat,
	Reserved: "messages",
	Keeps:    "choices' delta (streamed) or message: content, reasoning_content or reasoning, tool_calls; usage; finish_reason",
}
