package endpoints

// completions is OpenAI's legacy completions: the messages' contents
// joined by newlines go as one prompt, with no chat template, so the engine
// sees exactly that text.
var completions = Endpoint{
	Name:     Completions,
	Path:     CompletionsPath,
	Kind:     KindCompletion,
	Reserved: "prompt",
	Keeps:    "choices' text (the generated text); usage; finish_reason",
}
