package scrape

import "github.com/llmbench-org/llmbench/engines"

func init() { mustRegister(sglang) }

// staleGaugeNote is the SGLang scheduler-gauge caveat (engine-metrics.md §1.3, §6.1).
const staleGaugeNote = "scheduler gauge, written only at each new prefill batch and every --decode-log-interval decode steps (default 40), so a scrape often re-reads an old value, and it can freeze at its last non-zero value once traffic stops"

// sglang maps SGLang's `sglang:` metrics (engine-metrics.md §1). Counters and
// histograms come from the tokenizer (API server) process and are summed over
// whatever labels they carry; scheduler metrics carry tp_rank, pp_rank and
// moe_ep_rank, whose series repeat the same batch when every rank exports
// (--enable-metrics-for-all-schedulers), so those labels are mirrors, while
// dp_rank, engine and pid series are distinct schedulers and add up.
var sglang = tableDialect{
	name:     engines.SGLang,
	prefixes: []string{"sglang:", "sglang_"},
	aliases:  map[string]string{"sglang_": "sglang:"}, // some gateways re-export with an underscore
	mirrors:  []string{"tp_rank", "pp_rank", "moe_ep_rank", "attn_tp_rank"},
	rules: []rule{
		{concept: RequestsRunning, names: []string{"sglang:num_running_reqs"},
			note: staleGaugeNote + "; at a prefill log it excludes the requests being admitted"},
		{concept: RequestsWaiting, names: []string{"sglang:num_queue_reqs"}, note: staleGaugeNote},
		{concept: KVCacheUsage, names: []string{"sglang:token_usage"},
			note: staleGaugeNote + "; evictable radix-cache tokens count as free"},
		{concept: GenThroughput, names: []string{"sglang:gen_throughput"},
			note: staleGaugeNote + "; tokens since the previous decode log over the wall time since then, kept between logs"},

		{concept: PromptTokens, names: []string{"sglang:prompt_tokens_total"},
			note: "added when a request finishes; the full prompt, prefix-cache hits included"},
		{concept: GenerationTokens, names: []string{"sglang:generation_tokens_total"}, note: "added when a request finishes"},
		{concept: CachedTokens, names: []string{"sglang:cached_tokens_total"},
			note: "prefix-cache hit tokens, summed over cache_source; added at finish, only when non-zero"},
		{concept: RequestsFinished, names: []string{"sglang:num_requests_total"},
			note: "finished requests (not received); aborted ones are counted apart"},
		{concept: RequestsAborted, names: []string{"sglang:num_aborted_requests_total"}},
		{concept: Preemptions, names: []string{"sglang:num_retracted_requests_total"},
			note: "retractions, SGLang's preemption under KV pressure"},

		{concept: TTFT, names: []string{"sglang:time_to_first_token_seconds"},
			note: "API-server receipt to the first output chunk reaching the tokenizer manager: includes tokenization, queue, prefill, detokenization and IPC, excludes HTTP; default buckets start at 0.1 s"},
		{concept: ITL, names: []string{"sglang:inter_token_latency_seconds"},
			note: "counts tokens, not observations: each chunk adds its token count to the bucket of its per-token interval, so _count is the tokens after each request's first chunk and _sum/_count is the mean per-token ITL; multi-token chunks smooth the per-token tail"},
		{concept: E2E, names: []string{"sglang:e2e_request_latency_seconds"},
			note: "API-server receipt to the final chunk reaching the tokenizer manager"},
		{concept: Queue, names: []string{"sglang:queue_time_seconds"},
			note: "scheduler: wait-queue entry to the first forward batch"},
		{concept: Prefill, names: []string{"sglang:per_stage_req_latency_seconds"}, sel: selector{match: map[string]string{"stage": "prefill_forward"}},
			note: "per_stage_req_latency_seconds{stage=\"prefill_forward\"}"},
	},
	notes: []Mapping{
		{Concept: PrefixCacheHit, Metrics: []string{"sglang:cache_hit_rate"},
			Note: "not mapped: the gauge is one prefill batch's hit rate and is reset to 0 at every decode log; use Δcached_tokens / Δprompt_tokens"},
		{Concept: TPOT, Metrics: []string{"sglang:time_per_output_token_seconds"},
			Note: "not mapped: older releases observed a running per-request average on every chunk, which is neither TPOT nor ITL"},
		{Concept: Decode, Metrics: []string{"sglang:per_stage_req_latency_seconds{stage=\"decode_loop\"}"},
			Note: "not mapped: decode_loop is observed once per decode iteration per request, not once per request"},
	},
}
