package scrape

import (
	"math"

	"github.com/llmbench-org/llmbench/engines"
)

func init() { mustRegister(trtllm) }

// trtllm maps `trtllm-serve`'s `trtllm_` metrics (engine-metrics.md §4.4),
// adapted from vLLM V0; Dynamo used to re-export them as `trtllm:`.
var trtllm = tableDialect{
	name:     engines.TRTLLM,
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
