package scrape

import "github.com/llmbench-org/llmbench/engines"

func init() { mustRegister(tgi) }

// tgi maps HuggingFace text-generation-inference's `tgi_` metrics
// (engine-metrics.md §4.1). It has no TTFT and no KV-usage metric, and no
// token counters: those come from the token-length histograms' sums.
var tgi = tableDialect{
	name:     engines.TGI,
	prefixes: []string{"tgi_"},
	rules: []rule{
		{concept: RequestsRunning, names: []string{"tgi_batch_current_size"}, note: "the current batch size"},
		{concept: RequestsWaiting, names: []string{"tgi_queue_size"}},
		{concept: BatchSize, names: []string{"tgi_batch_current_size"}},

		{concept: PromptTokens, names: []string{"tgi_request_input_length"}, fromSum: true,
			note: "the _sum of the per-request input-length histogram, observed per request"},
		{concept: GenerationTokens, names: []string{"tgi_request_generated_tokens"}, fromSum: true,
			note: "the _sum of the per-request generated-tokens histogram, observed when a request finishes"},
		{concept: RequestsReceived, names: []string{"tgi_request_count"}},
		{concept: RequestsFinished, names: []string{"tgi_request_success"}},

		{concept: E2E, names: []string{"tgi_request_duration"}, note: "router side; x1.5 geometric buckets"},
		{concept: Queue, names: []string{"tgi_request_queue_duration"}},
		{concept: Inference, names: []string{"tgi_request_inference_duration"}},
		{concept: TPOT, names: []string{"tgi_request_mean_time_per_token_duration"},
			note: "inference time / generated tokens: includes prefill, so it is larger than TPOT"},
	},
	notes: []Mapping{
		{Concept: TTFT, Metrics: []string{"(none)"}, Note: "TGI exposes no time-to-first-token metric"},
	},
}
