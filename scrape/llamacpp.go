package scrape

// llamacpp maps the llama.cpp server's `llamacpp:` metrics (--metrics;
// engine-metrics.md §4.2): no labels, no histograms, no request counter.
var llamacpp = tableDialect{
	name:     "llamacpp",
	prefixes: []string{"llamacpp:"},
	rules: []rule{
		{concept: RequestsRunning, names: []string{"llamacpp:requests_processing"}, note: "busy slots"},
		{concept: RequestsWaiting, names: []string{"llamacpp:requests_deferred"}, note: "tasks deferred for lack of a free slot"},
		{concept: KVCacheUsage, names: []string{"llamacpp:kv_cache_usage_ratio"}, note: "older builds only"},
		{concept: GenThroughput, names: []string{"llamacpp:predicted_tokens_seconds"},
			note: "per-slot generation speed over the current bucket, not the server's aggregate; derive throughput from Δgeneration_tokens"},
		{concept: BatchSize, names: []string{"llamacpp:n_busy_slots_per_decode"}, note: "an average over llama_decode() calls, exposed as a counter"},

		{concept: PromptTokens, names: []string{"llamacpp:prompt_tokens_total"},
			note: "evaluated prompt tokens only: prompt-cache reuse is excluded, so it is below the client's usage"},
		{concept: GenerationTokens, names: []string{"llamacpp:tokens_predicted_total"}},
	},
	notes: []Mapping{
		{Concept: RequestsFinished, Metrics: []string{"(none)"}, Note: "llama.cpp counts no requests: request conservation and settling cannot be checked"},
	},
}
