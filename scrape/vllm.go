package scrape

import "github.com/llmbench-org/llmbench/engines"

func init() { mustRegister(vllm) }

// notFinished drops vLLM-style finished_reason values that are not a
// successful finish: they count as aborted, never as finished.
var notFinished = selector{exclude: map[string][]string{"finished_reason": {"abort", "error", "cancelled"}}}

// vllm maps vLLM's `vllm:` metrics (engine-metrics.md §2): the V1 engine's
// current names first, then the older V1 and V0 aliases. Every series carries
// model_name and, in V1, engine (the DP rank): all of them add up.
var vllm = tableDialect{
	name:     engines.VLLM,
	prefixes: []string{"vllm:"},
	rules: []rule{
		{concept: RequestsRunning, names: []string{"vllm:num_requests_running"},
			note: "requests in the running batch after the last scheduler step; refreshed every engine step"},
		{concept: RequestsWaiting, names: []string{"vllm:num_requests_waiting"}},
		{concept: KVCacheUsage, names: []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
			note: "fraction of KV blocks in use; free and evictable cached blocks count as unused"},
		{concept: PrefixCacheHit, names: []string{"vllm:gpu_prefix_cache_hit_rate"},
			note: "V0 only; V1 has hit and query counters: use Δprefix_cache_hits / Δprefix_cache_queries"},
		{concept: GenThroughput, names: []string{"vllm:avg_generation_throughput_toks_per_s"}, note: "V0 only, an interval average"},

		{concept: PromptTokens, names: []string{"vllm:prompt_tokens_total"},
			note: "added when a request's prefill completes (first output), the full prompt including prefix-cache hits"},
		{concept: GenerationTokens, names: []string{"vllm:generation_tokens_total"}, note: "added every engine step"},
		{concept: CachedTokens, names: []string{"vllm:prompt_tokens_cached_total"}, note: "newest releases only"},
		{concept: PrefixQueries, names: []string{"vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"},
			note: "tokens queried when requests are scheduled (blocks, not tokens, before 0.9)"},
		{concept: PrefixHits, names: []string{"vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"}},
		{concept: RequestsReceived, names: []string{"http_requests_total"}, sel: selector{endpoint: "handler"},
			note: "HTTP instrumentator: responses of every endpoint llmbench sends to (chat and completions), of any status, counted when the response ends"},
		{concept: RequestsFinished, names: []string{"vllm:request_success_total"}, sel: notFinished,
			note: "request_success_total summed over finished_reason except abort and error"},
		{concept: RequestsAborted, names: []string{"vllm:request_success_total"}, sel: selector{match: map[string]string{"finished_reason": "abort"}}},
		{concept: Preemptions, names: []string{"vllm:num_preemptions_total"}},

		{concept: TTFT, names: []string{"vllm:time_to_first_token_seconds"},
			note: "frontend wall clock: request arrival to the output handler processing the first token, before detokenization and the SSE write"},
		{concept: ITL, names: []string{"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"},
			note: "engine-core clock, one observation per request per decode step (several tokens under speculative decoding); named time_per_output_token_seconds before 0.11"},
		{concept: TPOT, names: []string{"vllm:request_time_per_output_token_seconds"},
			note: "per request at finish: decode time / (tokens − 1), excluding the first token"},
		{concept: E2E, names: []string{"vllm:e2e_request_latency_seconds"}, note: "frontend wall clock, arrival to finish"},
		{concept: Queue, names: []string{"vllm:request_queue_time_seconds", "vllm:time_in_queue_requests"},
			note: "engine-core clock: queued to first scheduled (re-queueing after preemption not included); TTFT ≠ queue + prefill, the gap is input processing and IPC"},
		{concept: Prefill, names: []string{"vllm:request_prefill_time_seconds"}, note: "engine core: first scheduled to first token"},
		{concept: Decode, names: []string{"vllm:request_decode_time_seconds"}, note: "engine core: first token to last token"},
		{concept: Inference, names: []string{"vllm:request_inference_time_seconds"}, note: "engine core: first scheduled to last token"},
	},
	notes: []Mapping{
		{Concept: BatchSize, Metrics: []string{"vllm:iteration_tokens_total"},
			Note: "not mapped: a histogram of tokens per engine step, not requests"},
	},
}
