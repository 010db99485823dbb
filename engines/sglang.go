package engines

// sglang is SGLang (python -m sglang.launch_server).
var sglang = Family{
	Name:    SGLang,
	Display: "SGLang",
	IDs: IDs{
		BodyField: "rid",
		Echo:      "{id}: the chunk ids and the trace carry rid as sent",
	},
	Tokenize: []TokenizeAPI{TokenizeVLLM, TokenizeLlamaCpp, TokenizeTGI},
	Lengths:  Lengths{MinTokens: true, How: "ignore_eos with min_tokens = max_tokens (sampling parameters)"},
	// Without --enable-metrics SGLang serves no /metrics. Its /health
	// answers 503 until the warm-up request has run (newer versions).
	// python3, not python: Debian and Ubuntu images often lack the latter.
	Launch: &Launch{
		Argv:      []string{"python3", "-m", "sglang.launch_server", "--model-path", "{model}", "--host", "{host}", "--port", "{port}", "--enable-metrics"},
		ReadyPath: "/health",
	},
	Reconcile: Reconcile{
		ITLCountsTokens: true, LoggedGauges: true, DecodeLogInterval: 40, TokensAtFinish: true,
		TTFTSpan:    "API-server receipt to the first chunk at the tokenizer manager (tokenization, queue, prefill, detokenization, IPC)",
		OutsideTTFT: "network, HTTP and SSE framing, the client's parsing",
		KVNote:      "SGLang counts evictable prefix-cache tokens as free",
		// num_requests_total counts finished requests; aborted ones go to
		// num_aborted_requests_total.
		AbandonedNotFinished: true,
	},
	Wire: Wire{Quirks: []string{
		"serves /tokenize at the server root and at /v1/tokenize",
		"scheduler gauges are rewritten only every --decode-log-interval decode steps (default 40)",
	}},
	CacheReset: CacheResetSGLang,
	Sim:        true,
}
