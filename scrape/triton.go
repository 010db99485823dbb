package scrape

import "github.com/llmbench-org/llmbench/engines"

func init() { mustRegister(triton) }

// triton maps NVIDIA Triton's core `nv_inference_*` metrics and the
// TensorRT-LLM backend's `nv_trt_llm_*` gauges (engine-metrics.md §4.3).
// Triton counts a request once per model it passes through, so an ensemble
// (preprocessing → tensorrt_llm → postprocessing) counts it four times:
// model and version are mirror labels, and the largest per-model value is
// kept rather than the sum.
var triton = tableDialect{
	name:     engines.Triton,
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
