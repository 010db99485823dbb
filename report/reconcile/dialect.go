package reconcile

// semantics is what reconciliation must know about a dialect's metrics to
// compare them with the client fairly (engine-metrics.md §6).
type semantics struct {
	name string
	// itlCountsTokens: the ITL histogram's count is tokens, each chunk adding
	// its token count to the bucket of its per-token interval (SGLang), so
	// its mean is per token. Otherwise there is one observation per chunk
	// (per engine step per request: vLLM, FastDeploy), and its mean is per chunk.
	itlCountsTokens bool
	// loggedGauges: scheduler gauges are written only at a prefill batch and
	// every decodeLogInterval decode steps (SGLang), so scrapes re-read old
	// values and the gauges freeze when the load stops.
	loggedGauges      bool
	decodeLogInterval int
	// ttftSpan says what the engine's TTFT covers, for the decomposition verdict.
	ttftSpan string
	// outsideTTFT names what lies between the engine's TTFT and the client's.
	outsideTTFT string
	// tokensAtFinish: the token counters grow only when a request finishes
	// (SGLang). Otherwise (vLLM at the first token and per step, FastDeploy
	// per step) a window's counter deltas include part of the tokens of the
	// requests in flight at its edges.
	tokensAtFinish bool
	// promptComputedOnly: the prompt-token counter counts only the prompt
	// tokens the engine processed, not those it reused from its prompt cache
	// (llama.cpp), so it falls short of the usage by the cached tokens.
	promptComputedOnly bool
	// timeResolution is what each request's time is truncated to before
	// the engine adds it to its cumulative time counters (decode_seconds,
	// prefill_seconds): llama.cpp keeps whole milliseconds. 0 = exact.
	timeResolution float64
	// slotTimeCounters: prefill_seconds and decode_seconds add up each
	// request's whole time in a slot (llama.cpp: prompt time from the slot
	// starting the prompt to the first token, generation time from there
	// to the last, when the slot is released), so their increase is
	// Little's law's sum of the time the engine ran the requests.
	slotTimeCounters bool
	// prefillSpan says what the engine's prefill time covers, and
	// outsidePrefill what lies between it and the client's TTFT, for an
	// engine whose TTFT is known only through its prefill-time counter.
	prefillSpan, outsidePrefill string
}

var dialectSemantics = map[string]semantics{
	"sglang": {
		name: "sglang", itlCountsTokens: true, loggedGauges: true, decodeLogInterval: 40, tokensAtFinish: true,
		ttftSpan:    "API-server receipt to the first chunk at the tokenizer manager (tokenization, queue, prefill, detokenization, IPC)",
		outsideTTFT: "network, HTTP and SSE framing, the client's parsing",
	},
	"vllm": {
		name:        "vllm",
		ttftSpan:    "frontend arrival to the output handler's first token (input processing, queue, prefill, IPC)",
		outsideTTFT: "detokenization, the SSE write, network, the client's parsing",
	},
	"fastdeploy": {
		name:        "fastdeploy",
		ttftSpan:    "API-server arrival to the token processor's first token (older releases start at inference start and exclude the queue)",
		outsideTTFT: "postprocessing, the SSE write, network, the client's parsing",
	},
	// llama.cpp has no histograms and counts no requests: its latency is in
	// two cumulative-time counters, each request adding whole milliseconds
	// (truncated; a real server's prompt times of 3.056, 0.296 and 0.422 ms
	// added 3 ms). Prompt tokens and prompt time are counted at a request's
	// first token, generated tokens and generation time at its finish.
	"llamacpp": {
		name: "llamacpp", promptComputedOnly: true, timeResolution: 0.001, slotTimeCounters: true,
		ttftSpan:       "the engine's own TTFT",
		outsideTTFT:    "whatever lies between the engine's measuring point and the client",
		prefillSpan:    "from its slot starting the prompt to the first token sampled",
		outsidePrefill: "waiting for a free slot (requests_deferred), tokenization, HTTP, the network and the first token's delivery",
	},
}

// semanticsOf returns the dialect's semantics, or neutral ones for a dialect
// reconcile knows nothing special about (one ITL observation per chunk,
// gauges taken as live).
func semanticsOf(dialect string) semantics {
	if s, ok := dialectSemantics[dialect]; ok {
		return s
	}
	return semantics{
		name:           dialect,
		ttftSpan:       "the engine's own TTFT",
		outsideTTFT:    "whatever lies between the engine's measuring point and the client",
		prefillSpan:    "the engine's own prefill time",
		outsidePrefill: "the queue and whatever lies between the engine's prefill and the client",
	}
}
