package endpoints

// responses is OpenAI's Responses API: the messages go as the input list
// ({"role","content"} items), the engine renders them with its chat
// template as it does chat's; a stream is typed events (response.created …
// response.completed) whose data carries "type" and "sequence_number", with
// no [DONE]; usage (input_tokens, output_tokens) comes at completion.
var responses = Endpoint{
	Name:     Responses,
	Path:     ResponsesPath,
	Kind:     KindResponses,
	Reserved: "input",
	Keeps:    "output_text, reasoning and function-call argument deltas (streamed) or the output items; the usage at completion; status (completed: stop or tool_calls, incomplete: length)",
}

// The Responses endpoint's name and path.
const (
	Responses     = "responses"
	ResponsesPath = "/responses"
)
