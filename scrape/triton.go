package scrape

import "math"

// triton maps NVIDIA Triton's core `nv_inference_*` metrics and the
// TensorRT-LLM backend's `nv_trt_llm_*` gauges (engine-metrics.md §4.3).
// Triton counts a request once per model it passes through, so an ensemble
// (preprocessing → tensorrt_llm → postprocessing) counts it four times:
// model and version are mirror labels, and the largest per-model value is
// kept rather than the sum.
var triton = tableDialect{
	name:     "triton",
	prefixes: []string{"nv_trt_llm_", "nv_inference_"},
	mirrors:  []string{"model", "version"},
	rules: []rule{
		{concept: RequestsRunning, names: []string{"nv_trt_llm_request_metrics"}, sel: selector{match: map[string]string{"request_type": "scheduled"}},
			note: "TRT-LLM batcher: scheduled requests"},
		{concept: RequestsWaiting, names: []string{"nv_trt_llm_request_metrics"}, sel: selector{match: map[string]string{"request_type": "waiting"}},
			note: "TRT-LLM batcher queue; without the backend gauges, Triton's own scheduler queue (pending_request_count)"},
		{concept: RequestsWaiting, names: []string{"nv_inference_pending_request_count"}},
		{concept: KVCacheUsage, names: []string{"nv_trt_llm_kv_cache_block_metrics"}, sel: selector{match: map[string]string{"kv_cache_block_type": "fraction"}},
			note: "falls back to used / max blocks"},

		{concept: RequestsFinished, names: []string{"nv_inference_request_success"},
			note: "the largest per-model count (an ensemble counts each request once per composing model)"},

		{concept: TTFT, names: []string{"nv_inference_first_response_histogram_ms"}, scale: 0.001,
			note: "opt-in (--metrics-config histogram_latencies=true), in ms: the first response of a decoupled model, which is the first token when streaming"},
	},
	notes: []Mapping{
		{Concept: E2E, Metrics: []string{"nv_inference_request_duration_us"},
			Note: "mean only: cumulative µs over successful requests of the same model (no buckets)"},
		{Concept: Queue, Metrics: []string{"nv_inference_queue_duration_us"},
			Note: "mean only: Triton's scheduler queue, cumulative µs over successful requests of the same model"},
	},
	reads: []string{"nv_trt_llm_kv_cache_block_metrics", "nv_inference_request_success", "nv_inference_request_duration_us", "nv_inference_queue_duration_us"},
	derive: func(ix familyIndex, s *Snapshot) {
		if _, ok := s.Gauges[KVCacheUsage]; !ok {
			used, okU := ix.scalar("nv_trt_llm_kv_cache_block_metrics", selector{match: map[string]string{"kv_cache_block_type": "used"}}, nil, false)
			total, okM := ix.scalar("nv_trt_llm_kv_cache_block_metrics", selector{match: map[string]string{"kv_cache_block_type": "max"}}, nil, false)
			if okU && okM && total > 0 {
				s.Gauges[KVCacheUsage] = used / total
			}
		}
		for c, sum := range map[Concept]string{E2E: "nv_inference_request_duration_us", Queue: "nv_inference_queue_duration_us"} {
			if h, ok := ix.meanOnly("nv_inference_request_success", sum, 1e-6); ok {
				s.Histograms[c] = h
			}
		}
	},
}

// trtllm maps `trtllm-serve`'s `trtllm_` metrics (engine-metrics.md §4.4),
// adapted from vLLM V0; Dynamo used to re-export them as `trtllm:`.
var trtllm = tableDialect{
	name:     "trtllm",
	prefixes: []string{"trtllm_", "trtllm:"},
	aliases:  map[string]string{"trtllm:": "trtllm_"},
	rules: []rule{
		{concept: RequestsRunning, names: []string{"trtllm_num_requests_running"}},
		{concept: RequestsWaiting, names: []string{"trtllm_num_requests_waiting"}},
		{concept: KVCacheUsage, names: []string{"trtllm_kv_cache_utilization"}},
		{concept: PrefixCacheHit, names: []string{"trtllm_kv_cache_hit_rate"}},
		{concept: BatchSize, names: []string{"trtllm_scheduled_batch_size"}},

		{concept: PromptTokens, names: []string{"trtllm_prompt_tokens_total"}},
		{concept: GenerationTokens, names: []string{"trtllm_generation_tokens_total"}},
		{concept: RequestsFinished, names: []string{"trtllm_request_success_total", "trtllm_num_requests_completed_total"}, sel: notFinished,
			note: "request_success_total summed over finished_reason except abort, error and cancelled"},
		{concept: RequestsAborted, names: []string{"trtllm_request_success_total"}, sel: selector{match: map[string]string{"finished_reason": "cancelled"}}},

		{concept: TTFT, names: []string{"trtllm_time_to_first_token_seconds"}},
		{concept: ITL, names: []string{"trtllm_time_per_output_token_seconds"}, note: "per-step inter-token latency (vLLM V0 semantics)"},
		{concept: E2E, names: []string{"trtllm_e2e_request_latency_seconds"}},
		{concept: Queue, names: []string{"trtllm_request_queue_time_seconds"}},
		{concept: Prefill, names: []string{"trtllm_request_prefill_time_seconds"}},
		{concept: Decode, names: []string{"trtllm_request_decode_time_seconds"}},
		{concept: Inference, names: []string{"trtllm_request_inference_time_seconds"}},
	},
}

// meanOnly builds a bucketless histogram (a mean, no quantiles) from a
// request counter and a cumulative-duration counter of the same series: the
// series with the largest count is taken (on a tie, the one with the
// largest sum: the ensemble that encloses the others, or the model where the
// queueing happens), with the sum of identical labels.
func (ix familyIndex) meanOnly(countName, sumName string, scale float64) (Histogram, bool) {
	counts, sums := ix[countName], ix[sumName]
	if counts == nil || sums == nil {
		return Histogram{}, false
	}
	sumOf := map[string]float64{}
	for _, m := range sums.GetMetric() {
		if v, ok := scalarValue(m); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			sumOf[groupKey(m, nil)] = v
		}
	}
	var best Histogram
	found := false
	for _, m := range counts.GetMetric() {
		n, ok := scalarValue(m)
		sum, hasSum := sumOf[groupKey(m, nil)]
		if !ok || !hasSum || math.IsNaN(n) || math.IsInf(n, 0) || n < 0 {
			continue
		}
		h := Histogram{Count: n, Sum: sum * scale}
		if !found || h.Count > best.Count || (h.Count == best.Count && h.Sum > best.Sum) {
			best, found = h, true
		}
	}
	return best, found
}
