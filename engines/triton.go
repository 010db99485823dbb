package engines

// triton is NVIDIA Triton Inference Server with the TensorRT-LLM backend.
var triton = Family{
	Name:    Triton,
	Display: "Triton",
	IDs: IDs{
		Echo: "its own ids: none sent is read from the body",
	},
	// Triton serves none of the tokenizer APIs: they are tried in the
	// unknown engine's order, in case a gateway in front does.
	Tokenize: TokenizeAPIs,
	Lengths:  Lengths{How: "ignore_eos alone"},
	// Not launched: llmbench starts it as kind command.
	Launch:    nil,
	Reconcile: NeutralReconcile,
	Wire: Wire{Quirks: []string{
		"an ensemble counts each request once per composing model",
		"its TTFT histogram is opt-in (--metrics-config histogram_latencies=true), in ms",
	}},
}
