package scrape

import "github.com/llmbench-org/llmbench/engines"

func init() { mustRegister(fastdeploy) }

// fastdeploy maps FastDeploy's `fastdeploy:` metrics (engine-metrics.md §3).
// Series are unlabelled, or carry model_id (API-worker metrics): all add up.
var fastdeploy = tableDialect{
	name:     engines.FastDeploy,
	prefixes: []string{"fastdeploy:"},
	rules: []rule{
		{concept: RequestsRunning, names: []string{"fastdeploy:num_requests_running"},
			note: "an increment/decrement gauge that can drift if a path misses its decrement"},
		{concept: RequestsWaiting, names: []string{"fastdeploy:num_requests_waiting"}},
		{concept: KVCacheUsage, names: []string{"fastdeploy:gpu_cache_usage_perc"},
			note: "falls back to 1 − available_gpu_resource; available blocks include unreleased prefix blocks"},
		{concept: PrefixCacheHit, names: []string{"fastdeploy:hit_token_rate"}, note: "token-level hit rate from the cache manager"},
		{concept: BatchSize, names: []string{"fastdeploy:batch_size"}},

		{concept: PromptTokens, names: []string{"fastdeploy:prompt_tokens_total"}, note: "API worker, per request"},
		{concept: GenerationTokens, names: []string{"fastdeploy:generation_tokens_total"}, note: "token processor, every step"},
		{concept: CachedTokens, names: []string{"fastdeploy:prefix_cache_token_num_total"}},
		{concept: RequestsReceived, names: []string{"fastdeploy:requests_number_total"}},
		{concept: RequestsFinished, names: []string{"fastdeploy:request_success_total"}, note: "counted when the last token is processed"},

		{concept: TTFT, names: []string{"fastdeploy:time_to_first_token_seconds"},
			note: "buckets end at 1 s: anything slower is only in +Inf and its quantiles are unknowable; newer releases measure from API-server arrival, older ones from inference start (excluding the queue)"},
		{concept: ITL, names: []string{"fastdeploy:time_per_output_token_seconds"},
			note: "per-step inter-token latency despite its TPOT name; buckets end at 1 s"},
		{concept: E2E, names: []string{"fastdeploy:e2e_request_latency_seconds"}, note: "API worker: arrival to final response"},
		{concept: Queue, names: []string{"fastdeploy:request_queue_time_seconds"}, note: "preprocess end to inference start"},
		{concept: Prefill, names: []string{"fastdeploy:request_prefill_time_seconds"},
			note: "code: inference start to first token (the help string says otherwise)"},
		{concept: Decode, names: []string{"fastdeploy:request_decode_time_seconds"}, note: "first token to completion"},
		{concept: Inference, names: []string{"fastdeploy:request_inference_time_seconds"}, note: "inference start to completion"},
	},
	reads: []string{"fastdeploy:available_gpu_resource"},
	derive: func(ix familyIndex, s *Snapshot) {
		if _, ok := s.Gauges[KVCacheUsage]; ok {
			return
		}
		if free, ok := ix.scalar("fastdeploy:available_gpu_resource", selector{}, nil, true); ok {
			s.Gauges[KVCacheUsage] = 1 - free
		}
	},
}
