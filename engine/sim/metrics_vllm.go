package sim

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// vLLM V1 bucket lists (engine-metrics.md §2).
var (
	vllmREQBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
		120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	vllmTTFTBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
		7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	vllmITLBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
		10.0, 20.0, 40.0, 80.0}
	vllmIterationBuckets = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	vllmParamsNBuckets   = []float64{1, 2, 5, 10, 20}
)

// buckets125 mirrors vLLM's and FastDeploy's build_1_2_5_buckets(max):
// 1, 2, 5, 10, 20, 50, ... up to max.
func buckets125(maxValue int) []float64 {
	var out []float64
	for exp := 1.0; ; exp *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := m * exp
			if v > float64(maxValue) {
				return out
			}
			out = append(out, v)
		}
	}
}

// vllmMetrics speaks vLLM V1: scheduler gauges refreshed every engine step,
// per-step ITL (one observation per request per step, first token excluded),
// request-phase histograms on the engine-core clock at finish, and the
// _created gauges of a default prometheus_client registry.
type vllmMetrics struct {
	reg *prometheus.Registry

	running, waiting, kvUsage                      prometheus.Gauge
	prefixQueries, prefixHits, preemptions         prometheus.Counter
	promptTokens, generationTokens                 prometheus.Counter
	cachedTokens                                   prometheus.Counter
	success                                        *prometheus.CounterVec
	specDrafts, specDraftTokens, specAccepted      prometheus.Counter
	iterationTokens                                prometheus.Observer
	ttft, itl, tpot, e2e                           prometheus.Observer
	queue, prefill, decode, inference              prometheus.Observer
	reqPrompt, reqGeneration, reqMaxGen, reqMaxTok prometheus.Observer
	paramsN                                        prometheus.Observer

	lastQueries, lastHits int64
}

func newVLLMMetrics(model string, p Params, created time.Time) *vllmMetrics {
	reg := prometheus.NewRegistry()
	l := prometheus.Labels{"model_name": model, "engine": "0"}
	f := factory{reg: reg, created: created}
	tok := buckets125(p.MaxModelLen)
	m := &vllmMetrics{
		reg:              reg,
		running:          f.gauge("vllm:num_requests_running", "Number of requests in model execution batches.", l),
		waiting:          f.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", l),
		kvUsage:          f.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", l),
		prefixQueries:    f.counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", l),
		prefixHits:       f.counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", l),
		preemptions:      f.counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.", l),
		promptTokens:     f.counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", l),
		generationTokens: f.counter("vllm:generation_tokens_total", "Number of generation tokens processed.", l),
		// Added with the prompt, vLLM 0.32's name (decision 1800).
		cachedTokens: f.counter("vllm:prompt_tokens_cached_total", "Number of cached prompt tokens (local + external).", l),
		// vLLM pre-creates every finish reason at 0.
		success: f.counterVec("vllm:request_success_total", "Count of successfully processed requests.", l,
			"finished_reason", vllmFinishReasons...),
		iterationTokens: f.histogram("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", l, vllmIterationBuckets),
		ttft:            f.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", l, vllmTTFTBuckets),
		itl:             f.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", l, vllmITLBuckets),
		tpot:            f.histogram("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", l, vllmITLBuckets),
		e2e:             f.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", l, vllmREQBuckets),
		queue:           f.histogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", l, vllmREQBuckets),
		prefill:         f.histogram("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", l, vllmREQBuckets),
		decode:          f.histogram("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", l, vllmREQBuckets),
		inference:       f.histogram("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", l, vllmREQBuckets),
		reqPrompt:       f.histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", l, tok),
		reqGeneration:   f.histogram("vllm:request_generation_tokens", "Number of generation tokens processed.", l, tok),
		reqMaxGen:       f.histogram("vllm:request_max_num_generation_tokens", "Histogram of maximum number of requested generation tokens.", l, tok),
		reqMaxTok:       f.histogram("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", l, tok),
		paramsN:         f.histogram("vllm:request_params_n", "Histogram of the n request parameter.", l, vllmParamsNBuckets),
	}
	if p.SpecTokens > 0 {
		m.specDrafts = f.counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.", l)
		m.specDraftTokens = f.counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", l)
		m.specAccepted = f.counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", l)
	}
	info := f.gaugeVec("vllm:cache_config_info", "Information of the LLMEngine CacheConfig", nil,
		"block_size", "cache_dtype", "enable_prefix_caching", "engine", "gpu_memory_utilization", "num_gpu_blocks")
	info.WithLabelValues(strconv.Itoa(p.KVBlockSize), "auto", pyBool(p.PrefixCache), "0", "0.9", strconv.Itoa(p.KVBlocks)).Set(1)
	return m
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func (m *vllmMetrics) handler() http.Handler { return metricsHandler(m.reg) }

func (m *vllmMetrics) received(*stream) {}

func (m *vllmMetrics) queued(*stream, time.Duration) {}

func (m *vllmMetrics) scheduled(b *batch.Batch, sch *batch.Scheduler, _ time.Duration) {
	m.preemptions.Add(float64(len(b.Preempted)))
	// Queries and hits are recorded when new requests are scheduled
	// (re-schedules after preemption are not added).
	q, h := sch.PrefixCounters()
	m.prefixQueries.Add(float64(q - m.lastQueries))
	m.prefixHits.Add(float64(h - m.lastHits))
	m.lastQueries, m.lastHits = q, h
}

func (m *vllmMetrics) passed(b *batch.Batch, sch *batch.Scheduler, _ time.Duration, _ int) {
	m.running.Set(float64(sch.Running()))
	m.waiting.Set(float64(sch.Waiting()))
	m.kvUsage.Set(sch.KVUsage())
	prompt, gen := 0, 0
	for _, q := range b.Seqs {
		if q.StepPrefill() > 0 && q.StepEmitted() > 0 {
			prompt += q.PromptLen
		}
		gen += q.StepEmitted()
	}
	if prompt+gen > 0 {
		m.iterationTokens.Observe(float64(prompt + gen))
	}
	if m.specDrafts != nil && b.DecodeSeqs > 0 {
		m.specDrafts.Add(float64(b.DecodeSeqs))
		m.specDraftTokens.Add(float64(b.DraftTokens))
		m.specAccepted.Add(float64(b.DecodeTokens - b.DecodeSeqs))
	}
}

func (m *vllmMetrics) delivered(s *stream, n int, at time.Duration) {
	if s.pooling { // vLLM's pooling requests generate nothing: prefill is their output
		n = 0
	}
	m.generationTokens.Add(float64(n))
	if s.delivered == 0 {
		m.ttft.Observe(seconds(at - s.arrival))
		// The prompt is counted once, when its first output arrives.
		m.promptTokens.Add(float64(s.seq.PromptLen))
		m.cachedTokens.Add(float64(s.seq.CachedTokens))
		return
	}
	m.itl.Observe(seconds(at - s.lastDelivery))
}

func (m *vllmMetrics) finished(s *stream, at time.Duration) {
	m.success.WithLabelValues(finishedReason(s)).Inc()
	m.e2e.Observe(seconds(at - s.arrival))
	m.queue.Observe(seconds(s.queueLeave - s.queueEnter))
	first := s.firstDelivery
	if first == 0 {
		first = at
	}
	m.prefill.Observe(seconds(first - s.queueLeave))
	decode := at - first
	m.decode.Observe(seconds(decode))
	m.inference.Observe(seconds(at - s.queueLeave))
	if s.seq.Output > 1 {
		m.tpot.Observe(seconds(decode) / float64(s.seq.Output-1))
	} else {
		m.tpot.Observe(0)
	}
	m.reqPrompt.Observe(float64(s.seq.PromptLen))
	m.reqGeneration.Observe(float64(generated(s)))
	m.reqMaxGen.Observe(float64(s.seq.MaxTokens))
	if s.maxParam > 0 {
		m.reqMaxTok.Observe(float64(s.maxParam))
	}
	m.paramsN.Observe(1)
}

// aborted counts nothing: a request the client walked away from is dropped
// by vLLM's output processor (OutputProcessor.abort_requests) without the
// per-request stats a finished one records, so request_success_total,
// whatever its finished_reason, and every per-request histogram leave it
// out, while the prompt and generation token counters keep what it used
// (vLLM issue 55634 measured it on 0.10.1). The abort label is pre-created
// at 0 and stays there.
func (m *vllmMetrics) aborted(*stream, time.Duration) {}
