package engines

// tgi is HuggingFace text-generation-inference.
var tgi = Family{
	Name:    TGI,
	Display: "TGI",
	IDs: IDs{
		Echo: "its own ids: none sent is read from the body",
	},
	Tokenize: []TokenizeAPI{TokenizeTGI, TokenizeVLLM, TokenizeLlamaCpp},
	Lengths:  Lengths{How: "ignore_eos alone"},
	// Not launched: llmbench starts it as kind command.
	Launch:    nil,
	Reconcile: NeutralReconcile,
	Wire: Wire{Quirks: []string{
		"no TTFT metric, no token counters (token-length histograms' sums instead)",
	}},
}
