package engines

// vllm is vLLM (vllm serve).
var vllm = Family{
	Name:    VLLM,
	Display: "vLLM",
	IDs: IDs{
		BodyField: "request_id",
		Echo:      "chatcmpl-{id} (cmpl-{id} on /completions): the X-Request-Id header, else request_id",
	},
	Tokenize: []TokenizeAPI{TokenizeVLLM, TokenizeLlamaCpp, TokenizeTGI},
	Lengths:  Lengths{MinTokens: true, How: "ignore_eos with min_tokens = max_tokens (sampling parameters)"},
	// vLLM serves HTTP (with /metrics, always on) only once the engine is
	// built, so /health answering is readiness.
	Launch: &Launch{
		Argv:      []string{"vllm", "serve", "{model}", "--host", "{host}", "--port", "{port}"},
		ReadyPath: "/health",
	},
	Reconcile: Reconcile{
		TTFTSpan:             "frontend arrival to the output handler's first token (input processing, queue, prefill, IPC)",
		OutsideTTFT:          "detokenization, the SSE write, network, the client's parsing",
		AbandonedNotFinished: true,
	},
	Context: ContextAPI{Path: "/v1/models", Field: "data.max_model_len", What: "max_model_len"},
	Wire: Wire{Quirks: []string{
		"http_requests_total counts responses by handler path when they end, any status",
	}},
	CacheReset: CacheResetVLLM,
	Sim:        true,
}
