package scrape

import "github.com/llmbench-org/llmbench/engines"

func init() { mustRegister(llamacpp) }

// llamacpp maps the llama.cpp server's `llamacpp:` metrics (--metrics;
// engine-metrics.md §4.2): no labels, no histograms, no request counter.
// Its two cumulative-time counters are the engine's only latency figures:
// each request adds its prompt-processing and generation time in whole
// milliseconds, truncated (a real capture: prompt times of 3.056, 0.296 and
// 0.422 ms added 3 ms; generation times of 3.937, 2.894 and 2.293 ms, 7 ms).
var llamacpp = tableDialect{
	name:     engines.LlamaCpp,
	prefixes: []string{"llamacpp:"},
	rules: []rule{
		{concept: RequestsRunning, names: []string{"llamacpp:requests_processing"}, note: "busy slots"},
		{concept: RequestsWaiting, names: []string{"llamacpp:requests_deferred"}, note: "tasks deferred for lack of a free slot"},
		{concept: KVCacheUsage, names: []string{"llamacpp:kv_cache_usage_ratio"}, note: "older builds only"},
		{concept: GenThroughput, names: []string{"llamacpp:predicted_tokens_seconds"},
			note: "per-slot generation speed over the current bucket, not the server's aggregate; derive throughput from Δgeneration_tokens"},
		{concept: BatchSize, names: []string{"llamacpp:n_busy_slots_per_decode"},
			note: "an average over llama_decode() calls (declared a counter by older builds, a gauge by newer ones)"},

		{concept: PromptTokens, names: []string{"llamacpp:prompt_tokens_total"},
			note: "evaluated prompt tokens only: prompt-cache reuse is excluded, so it is below the client's usage by the cached tokens; added when a request's prompt is processed"},
		{concept: CachedTokens, names: []string{"llamacpp:prompt_tokens_cached_total"}, note: "newer builds only (decision 2200): prompt tokens the slot's cache held, added as the slot starts the prompt"},
		{concept: GenerationTokens, names: []string{"llamacpp:tokens_predicted_total"}, note: "added when a request finishes"},
		{concept: DecodeSeconds, names: []string{"llamacpp:tokens_predicted_seconds_total"},
			note: "Σ over requests of each one's generation time, from its first token to its last (per slot: concurrent requests add up), added at finish in whole milliseconds, truncated (whole microseconds in newer builds: decision 2200); ÷ Δgeneration_tokens is the engine's own time per generated token"},
		{concept: PrefillSeconds, names: []string{"llamacpp:prompt_seconds_total"},
			note: "Σ over requests of each one's prompt processing, from its slot starting the prompt to the first token (waiting for a free slot excluded), added in whole milliseconds, truncated: a prompt under 1 ms adds 0 (newer builds add each prompt batch's compute time in microseconds: decision 2200)"},
	},
	notes: []Mapping{
		{Concept: RequestsFinished, Metrics: []string{"(none)"}, Note: "llama.cpp counts no requests: request conservation and settling cannot be checked"},
	},
}
