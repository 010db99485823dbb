package engines

// trtllm is TensorRT-LLM's own OpenAI server (trtllm-serve).
var trtllm = Family{
	Name:    TRTLLM,
	Display: "TensorRT-LLM",
	IDs: IDs{
		Echo: "its own ids: none sent is read from the body",
	},
	// trtllm-serve serves none of the tokenizer APIs: they are tried in the
	// unknown engine's order, in case a gateway in front does.
	Tokenize: TokenizeAPIs,
	Lengths:  Lengths{How: "ignore_eos alone"},
	// Not launched: llmbench starts it as kind command.
	Launch:    nil,
	Reconcile: NeutralReconcile,
	Wire: Wire{Quirks: []string{
		"metric names adapted from vLLM V0; Dynamo re-exported them as trtllm:",
	}},
}
