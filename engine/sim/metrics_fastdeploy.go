package sim

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// FastDeploy bucket lists (engine-metrics.md §3): TTFT and TPOT stop at 1 s.
var (
	fdTTFTBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0}
	fdTPOTBuckets = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0}
	fdReqBuckets  = vllmREQBuckets
)

// fdTokenBucketMax is FastDeploy's build_1_2_5_buckets(33792).
const fdTokenBucketMax = 33792

// fastdeployMetrics speaks FastDeploy: no labels, counters declared without
// _total exposed with it (prometheus_client appends it), an inc/dec running
// gauge, per-step TPOT, request-phase histograms from the token processor.
type fastdeployMetrics struct {
	reg *prometheus.Registry

	requestsNumber, success, promptTokens, generationTokens prometheus.Counter
	prefixCache, prefixGPU, prefixCPU, sendCacheFailed      prometheus.Counter
	running, waiting                                        prometheus.Gauge
	ttft, tpot, e2e, inference, queue, prefill, decode      prometheus.Observer
	reqPrompt, tokenRatio, reqGeneration, reqMaxTokens      prometheus.Observer
	availableBatch, batchSize, maxBatch                     prometheus.Gauge
	hitReq, hitToken, cpuHit, gpuHit                        prometheus.Gauge
	availableBlocks, freeBlocks, maxBlocks, maxCPUBlocks    prometheus.Gauge
	availableResource, usage                                prometheus.Gauge

	// Speculative decoding (registered only when spec_tokens > 0).
	specAcceptance             prometheus.Gauge
	specAccepted, specEmitted  prometheus.Counter
	specAcceptedN, specDraftsN int

	maxRunning          int
	reqs, hitReqs       int
	queryTok, hitTokens int
}

func newFastDeployMetrics(p Params) *fastdeployMetrics {
	reg := prometheus.NewRegistry()
	f := factory{reg: reg}
	tok := buckets125(fdTokenBucketMax)
	m := &fastdeployMetrics{
		reg:               reg,
		maxRunning:        p.MaxRunningRequests,
		requestsNumber:    f.counter("fastdeploy:requests_number_total", "Total number of requests received", nil),
		success:           f.counter("fastdeploy:request_success_total", "Total number of successfully processed requests", nil),
		running:           f.gauge("fastdeploy:num_requests_running", "Number of requests currently running", nil),
		waiting:           f.gauge("fastdeploy:num_requests_waiting", "Number of requests currently waiting", nil),
		ttft:              f.histogram("fastdeploy:time_to_first_token_seconds", "Time to first token in seconds", nil, fdTTFTBuckets),
		tpot:              f.histogram("fastdeploy:time_per_output_token_seconds", "Time per output token in seconds", nil, fdTPOTBuckets),
		e2e:               f.histogram("fastdeploy:e2e_request_latency_seconds", "End-to-end request latency (from request arrival to final response)", nil, fdReqBuckets),
		inference:         f.histogram("fastdeploy:request_inference_time_seconds", "Time spent in inference phase (from inference start to last token)", nil, fdReqBuckets),
		queue:             f.histogram("fastdeploy:request_queue_time_seconds", "Time spent in waiting queue (from preprocess end to inference start)", nil, fdReqBuckets),
		prefill:           f.histogram("fastdeploy:request_prefill_time_seconds", "Time spent in prefill phase (from preprocess start to preprocess end)", nil, fdReqBuckets),
		decode:            f.histogram("fastdeploy:request_decode_time_seconds", "Time spent in decode phase (from first token to last token)", nil, fdReqBuckets),
		promptTokens:      f.counter("fastdeploy:prompt_tokens_total", "Total number of prompt tokens processed", nil),
		generationTokens:  f.counter("fastdeploy:generation_tokens_total", "Total number of generation tokens processed", nil),
		reqPrompt:         f.histogram("fastdeploy:request_prompt_tokens", "Number of prefill tokens processed.", nil, tok),
		tokenRatio:        f.histogram("fastdeploy:request_token_ratio", "Ratio of output tokens to request time per request", nil, tok),
		reqGeneration:     f.histogram("fastdeploy:request_generation_tokens", "Number of generation tokens processed.", nil, tok),
		reqMaxTokens:      f.histogram("fastdeploy:request_params_max_tokens", "Histogram of max_tokens parameter in request parameters", nil, tok),
		availableBatch:    f.gauge("fastdeploy:available_batch_size", "Number of requests that can still be inserted during the Decode phase", nil),
		batchSize:         f.gauge("fastdeploy:batch_size", "Real batch size during inference", nil),
		maxBatch:          f.gauge("fastdeploy:max_batch_size", "Maximum batch size determined when service started", nil),
		hitReq:            f.gauge("fastdeploy:hit_req_rate", "Request-level prefix cache hit rate", nil),
		hitToken:          f.gauge("fastdeploy:hit_token_rate", "Token-level prefix cache hit rate", nil),
		cpuHit:            f.gauge("fastdeploy:cpu_hit_token_rate", "Token-level CPU prefix cache hit rate", nil),
		gpuHit:            f.gauge("fastdeploy:gpu_hit_token_rate", "Token-level GPU prefix cache hit rate", nil),
		prefixCache:       f.counter("fastdeploy:prefix_cache_token_num_total", "Total number of cached tokens", nil),
		prefixGPU:         f.counter("fastdeploy:prefix_gpu_cache_token_num_total", "Total number of cached tokens on GPU", nil),
		prefixCPU:         f.counter("fastdeploy:prefix_cpu_cache_token_num_total", "Total number of cached tokens on CPU", nil),
		availableBlocks:   f.gauge("fastdeploy:available_gpu_block_num", "Number of available gpu blocks in cache, including prefix caching blocks that are not officially released", nil),
		freeBlocks:        f.gauge("fastdeploy:free_gpu_block_num", "Number of free blocks in cache", nil),
		maxBlocks:         f.gauge("fastdeploy:max_gpu_block_num", "Number of total blocks determined when service started", nil),
		maxCPUBlocks:      f.gauge("fastdeploy:max_cpu_block_num", "Number of total cpu blocks determined when service started", nil),
		availableResource: f.gauge("fastdeploy:available_gpu_resource", "Available blocks percentage, i.e. available_gpu_block_num / max_gpu_block_num", nil),
		usage:             f.gauge("fastdeploy:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage", nil),
		sendCacheFailed:   f.counter("fastdeploy:send_cache_failed_num_total", "Total number of failures of sending cache", nil),
	}
	if p.SpecTokens > 0 {
		m.specAcceptance = f.gauge("fastdeploy:spec_decode_draft_acceptance_rate", "Acceptance rate of speculative decoding", nil)
		m.specAccepted = f.counter("fastdeploy:spec_decode_num_accepted_tokens_total", "Total number of tokens accepted by the scoring model and verification program", nil)
		m.specEmitted = f.counter("fastdeploy:spec_decode_num_emitted_tokens_total", "Total number of tokens output by the entire system", nil)
	}
	info := f.gaugeVec("fastdeploy:cache_config_info", "Information of the engine's CacheConfig", nil,
		"block_size", "enable_prefix_caching", "num_cpu_blocks", "num_gpu_blocks")
	info.WithLabelValues(strconv.Itoa(p.KVBlockSize), pyBool(p.PrefixCache), "0", strconv.Itoa(p.KVBlocks)).Set(1)
	m.maxBatch.Set(float64(p.MaxRunningRequests))
	m.availableBatch.Set(float64(p.MaxRunningRequests))
	m.maxBlocks.Set(float64(p.KVBlocks))
	m.availableBlocks.Set(float64(p.KVBlocks))
	m.freeBlocks.Set(float64(p.KVBlocks))
	m.availableResource.Set(1)
	return m
}

func (m *fastdeployMetrics) handler() http.Handler { return metricsHandler(m.reg) }

// received: the API server counts the request and its prompt on arrival.
func (m *fastdeployMetrics) received(s *stream) {
	m.requestsNumber.Inc()
	m.promptTokens.Add(float64(s.seq.PromptLen))
	m.reqPrompt.Observe(float64(s.seq.PromptLen))
	if s.maxParam > 0 {
		m.reqMaxTokens.Observe(float64(s.maxParam))
	}
}

// queued: the request is scheduled; the running gauge is inc/dec.
func (m *fastdeployMetrics) queued(s *stream, _ time.Duration) {
	m.running.Inc()
	m.reqs++
	m.queryTok += s.seq.PromptLen
	if s.seq.CachedTokens > 0 {
		m.hitReqs++
		m.hitTokens += s.seq.CachedTokens
		m.prefixCache.Add(float64(s.seq.CachedTokens))
		m.prefixGPU.Add(float64(s.seq.CachedTokens))
	}
	m.hitReq.Set(float64(m.hitReqs) / float64(m.reqs))
	if m.queryTok > 0 {
		m.hitToken.Set(float64(m.hitTokens) / float64(m.queryTok))
		m.gpuHit.Set(float64(m.hitTokens) / float64(m.queryTok))
	}
}

func (m *fastdeployMetrics) scheduled(*batch.Batch, *batch.Scheduler, time.Duration) {}

func (m *fastdeployMetrics) passed(b *batch.Batch, sch *batch.Scheduler, _ time.Duration, _ int) {
	m.waiting.Set(float64(sch.Waiting()))
	m.batchSize.Set(float64(len(b.Seqs)))
	m.availableBatch.Set(float64(m.maxRunning - sch.Running()))
	avail := sch.KVFreeBlocks() + sch.KVEvictableBlocks()
	total := avail + sch.KVUsedBlocks()
	m.availableBlocks.Set(float64(avail))
	m.freeBlocks.Set(float64(sch.KVFreeBlocks()))
	m.availableResource.Set(float64(avail) / float64(total))
	m.usage.Set(sch.KVUsage())
	if m.specAcceptance != nil && b.DecodeSeqs > 0 {
		accepted := b.DecodeTokens - b.DecodeSeqs
		m.specAccepted.Add(float64(accepted))
		m.specEmitted.Add(float64(b.DecodeTokens))
		m.specAcceptedN += accepted
		m.specDraftsN += b.DraftTokens
		m.specAcceptance.Set(float64(m.specAcceptedN) / float64(m.specDraftsN))
	}
}

func (m *fastdeployMetrics) delivered(s *stream, n int, at time.Duration) {
	m.generationTokens.Add(float64(n))
	if s.delivered == 0 {
		m.ttft.Observe(seconds(at - s.arrival))
		m.queue.Observe(seconds(s.queueLeave - s.queueEnter))
		m.prefill.Observe(seconds(at - s.queueLeave))
		return
	}
	m.tpot.Observe(seconds(at - s.lastDelivery))
}

func (m *fastdeployMetrics) finished(s *stream, at time.Duration) {
	m.success.Inc()
	m.running.Dec()
	first := s.firstDelivery
	if first == 0 {
		first = at
	}
	m.decode.Observe(seconds(at - first))
	m.inference.Observe(seconds(at - s.queueLeave))
	m.e2e.Observe(seconds(at - s.arrival))
	m.reqGeneration.Observe(float64(s.seq.Output))
	if d := at - s.queueLeave; d > 0 {
		m.tokenRatio.Observe(float64(s.seq.Output) / d.Seconds())
	}
}

func (m *fastdeployMetrics) aborted(s *stream, _ time.Duration) {
	if s.queueLeave != 0 {
		m.running.Dec()
	}
}
