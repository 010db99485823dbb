package engines

// llamacpp is the llama.cpp server (llama-server).
var llamacpp = Family{
	Name:    LlamaCpp,
	Display: "llama.cpp",
	IDs: IDs{
		// llama.cpp reads no request id: the header goes, and nothing joins.
		Echo: "chatcmpl- and 32 random alphanumerics, on /completions too: no id sent comes back",
	},
	Tokenize: []TokenizeAPI{TokenizeLlamaCpp, TokenizeVLLM, TokenizeTGI},
	Lengths:  Lengths{How: "ignore_eos alone (n_predict is max_tokens)"},
	// llama-server needs --metrics for /metrics; its /health answers 503
	// "Loading model" until the model is loaded.
	Launch: &Launch{
		Argv:      []string{"llama-server", "-m", "{model}", "--host", "{host}", "--port", "{port}", "--metrics"},
		ReadyPath: "/health",
	},
	// llama.cpp has no histograms and counts no requests: its latency is in
	// two cumulative-time counters, each request adding its time truncated:
	// to whole milliseconds in builds up to May 2026 (a real server's prompt
	// times of 3.056, 0.296 and 0.422 ms added 3 ms), to whole microseconds
	// in the build CI runs (0c1e570, decision 2200); TimeResolution keeps
	// the coarser, so either reconciles. Prompt tokens and prompt time are
	// counted at a request's first token, generated tokens and generation
	// time at its finish.
	Reconcile: Reconcile{
		PromptComputedOnly: true, TimeResolution: 0.001, SlotTimeCounters: true,
		TTFTSpan:       "the engine's own TTFT",
		OutsideTTFT:    "whatever lies between the engine's measuring point and the client",
		PrefillSpan:    "from its slot starting the prompt to the first token sampled",
		OutsidePrefill: "waiting for a free slot (requests_deferred), tokenization, HTTP, the network and the first token's delivery",
	},
	Context: ContextAPI{Path: "/props", Field: "default_generation_settings.n_ctx",
		What: "the per-slot context (--ctx-size divided by --parallel)"},
	Wire: Wire{Quirks: []string{
		// Measured against a real llama-server (issues 20 and 22): the
		// header promises reuse, the server does not keep it after a stream.
		"closes the connection after every streamed response, although it answers Keep-Alive: timeout=5, max=100: each streamed request opens a new connection",
		"truncates at its per-slot context (the context size divided by the slots): a request whose prompt plus max_tokens exceeds it stops with finish_reason length, short of max_tokens",
		"serves /chat/completions and /completions without the /v1 prefix too",
		"answers carry a timings object (its own prompt and generation times)",
	}},
	CacheReset: CacheResetLlamaCppSlots,
	Sim:        true,
}
