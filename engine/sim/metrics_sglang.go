package sim

import (
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmbench-org/llmbench/engine/sim/batch"
)

// SGLang bucket lists (engine-metrics.md §1).
var (
	sglangTTFTBuckets = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400}
	sglangITLBuckets  = []float64{0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040,
		0.060, 0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.0, 2.0, 4.0, 6.0, 8.0}
	sglangE2EBuckets = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400,
		600, 1200, 1800, 2400}
	sglangQueueBuckets = []float64{0.0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90,
		100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000}
	sglangRetractionBuckets = []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 75, 100}
)

// sglangMetrics speaks SGLang's dialect: tokenizer-side request metrics
// observed when tokens reach the API server, and scheduler gauges written
// only at a prefill batch and every decode_log_interval decode passes.
type sglangMetrics struct {
	reg      *prometheus.Registry
	interval int

	// Tokenizer (labels engine_type, model_name).
	promptTokens, generationTokens    prometheus.Counter
	cachedTokens                      *prometheus.CounterVec
	requests, abortedReqs, soRequests prometheus.Counter
	ttft, e2e, retractions            prometheus.Observer
	itl                               *tokenHistogram

	// Scheduler (labels engine_type, model_name, moe_ep_rank, pp_rank, tp_rank).
	running, queue, grammarQueue, genThroughput, cacheHitRate, sumSeqLens prometheus.Gauge
	tokenUsage, usedTokens, maxTotalTokens                                prometheus.Gauge
	kvAvailable, kvEvictable, kvUsed                                      prometheus.Gauge
	specAcceptLength, specAcceptRate                                      prometheus.Gauge
	retractedReqs, pausedReqs                                             prometheus.Gauge // + pid label
	queueTime                                                             prometheus.Observer
	retractedTotal, retractedInput, retractedOutput                       prometheus.Counter
	realtimeTokens                                                        *prometheus.CounterVec

	// Scheduler-side state between logs.
	retractedSinceLog   int
	genSinceLog         int
	lastDecodeLogAt     time.Duration
	specEmitted, specRq int // tokens and request-passes since the last decode log
	blockSize           int
	capacityTokens      int
}

func newSGLangMetrics(model string, p Params) *sglangMetrics {
	reg := prometheus.NewRegistry()
	tok := prometheus.Labels{"model_name": model, "engine_type": "unified"}
	sch := prometheus.Labels{"model_name": model, "engine_type": "unified", "tp_rank": "0", "pp_rank": "0", "moe_ep_rank": "0"}
	schPid := prometheus.Labels{"pid": strconv.Itoa(os.Getpid())}
	for k, v := range sch {
		schPid[k] = v
	}
	f := factory{reg: reg}
	m := &sglangMetrics{
		reg:            reg,
		interval:       p.DecodeLogInterval,
		blockSize:      p.KVBlockSize,
		capacityTokens: p.KVCapacityTokens(),

		promptTokens:     f.counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.", tok),
		generationTokens: f.counter("sglang:generation_tokens_total", "Number of generation tokens processed.", tok),
		cachedTokens:     f.counterVec("sglang:cached_tokens_total", "Number of cached prompt tokens by source (device/host/storage).", tok, "cache_source"),
		requests:         f.counter("sglang:num_requests_total", "Number of requests processed.", tok),
		soRequests:       f.counter("sglang:num_so_requests_total", "Number of structured output requests processed.", tok),
		abortedReqs:      f.counter("sglang:num_aborted_requests_total", "Number of requests aborted.", tok),
		ttft:             f.histogram("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", tok, sglangTTFTBuckets),
		e2e:              f.histogram("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", tok, sglangE2EBuckets),
		retractions:      f.histogram("sglang:num_retractions", "Histogram of retraction counts per request.", tok, sglangRetractionBuckets),
		itl:              newTokenHistogram("sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", sglangITLBuckets, tok),

		running:          f.gauge("sglang:num_running_reqs", "The number of running requests.", sch),
		queue:            f.gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", sch),
		grammarQueue:     f.gauge("sglang:num_grammar_queue_reqs", "The number of requests in the grammar waiting queue.", sch),
		genThroughput:    f.gauge("sglang:gen_throughput", "The generation throughput (token/s).", sch),
		cacheHitRate:     f.gauge("sglang:cache_hit_rate", "The prefix cache hit rate.", sch),
		sumSeqLens:       f.gauge("sglang:decode_sum_seq_lens", "The sum of all sequence lengths in decode.", sch),
		tokenUsage:       f.gauge("sglang:token_usage", "The token usage.", sch),
		usedTokens:       f.gauge("sglang:num_used_tokens", "The number of used tokens.", sch),
		maxTotalTokens:   f.gauge("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.", sch),
		kvAvailable:      f.gauge("sglang:kv_available_tokens", "Number of free token slots in the KV cache pool.", sch),
		kvEvictable:      f.gauge("sglang:kv_evictable_tokens", "Number of evictable (radix-cached) token slots in the KV cache pool.", sch),
		kvUsed:           f.gauge("sglang:kv_used_tokens", "Number of actively used token slots in the KV cache pool.", sch),
		specAcceptLength: f.gauge("sglang:spec_accept_length", "The average acceptance length of speculative decoding.", sch),
		specAcceptRate:   f.gauge("sglang:spec_accept_rate", "The average acceptance rate of speculative decoding.", sch),
		retractedReqs:    f.gauge("sglang:num_retracted_reqs", "The number of retracted requests.", schPid),
		pausedReqs:       f.gauge("sglang:num_paused_reqs", "The number of paused requests by async weight sync.", schPid),
		queueTime:        f.histogram("sglang:queue_time_seconds", "Histogram of queueing time in seconds.", sch, sglangQueueBuckets),
		retractedTotal:   f.counter("sglang:num_retracted_requests_total", "Total number of retracted requests due to kvcache full.", sch),
		retractedInput:   f.counter("sglang:num_retracted_input_tokens_total", "Total number of input tokens of retracted requests.", sch),
		retractedOutput:  f.counter("sglang:num_retracted_output_tokens_total", "Total number of output tokens of retracted requests.", sch),
		realtimeTokens:   f.counterVec("sglang:realtime_tokens_total", "Total number of tokens processed, updated in real time.", sch, "mode"),
	}
	reg.MustRegister(m.itl)
	cfg := f.gaugeVec("sglang:cache_config_info", "Information about the cache configuration.", nil, "page_size", "num_pages")
	cfg.WithLabelValues(strconv.Itoa(p.KVBlockSize), strconv.Itoa(p.KVBlocks)).Set(1)
	m.maxTotalTokens.Set(float64(p.KVCapacityTokens()))
	m.kvAvailable.Set(float64(p.KVCapacityTokens()))
	return m
}

func (m *sglangMetrics) handler() http.Handler { return metricsHandler(m.reg) }

func (m *sglangMetrics) received(*stream) {}

func (m *sglangMetrics) queued(s *stream, at time.Duration) {
	m.queueTime.Observe(seconds(at - s.queueEnter))
}

// scheduled writes the prefill log when the pass carries prefill
// (SGLang's log_prefill_stats, once per new prefill batch).
func (m *sglangMetrics) scheduled(b *batch.Batch, sch *batch.Scheduler, _ time.Duration) {
	for _, q := range b.Preempted {
		m.retractedTotal.Inc()
		m.retractedInput.Add(float64(q.PromptLen))
		m.retractedOutput.Add(float64(q.Output))
	}
	m.retractedSinceLog += len(b.Preempted)
	if b.PrefillTokens == 0 {
		return
	}
	m.running.Set(float64(b.RunningBefore))
	m.queue.Set(float64(sch.Waiting()))
	m.setKV(sch)
	total := b.PrefillTokens + b.HitTokens
	rate := 0.0
	if total > 0 {
		rate = float64(b.HitTokens) / float64(total)
	}
	m.cacheHitRate.Set(rate)
	m.flushRetracted()
	if b.PrefillTokens > 0 {
		m.realtimeTokens.WithLabelValues("prefill_compute").Add(float64(b.PrefillTokens))
	}
	if b.HitTokens > 0 {
		m.realtimeTokens.WithLabelValues("prefill_cache").Add(float64(b.HitTokens))
	}
}

// passed writes the decode log every interval decode passes
// (SGLang's log_decode_stats).
func (m *sglangMetrics) passed(b *batch.Batch, sch *batch.Scheduler, at time.Duration, decodeN int) {
	if b.DecodeSeqs == 0 {
		return
	}
	if b.DecodeTokens > 0 {
		m.realtimeTokens.WithLabelValues("decode").Add(float64(b.DecodeTokens))
	}
	m.genSinceLog += b.DecodeTokens
	m.specEmitted += b.DecodeTokens
	m.specRq += b.DecodeSeqs
	if m.lastDecodeLogAt == 0 {
		m.lastDecodeLogAt = at
	}
	if decodeN%m.interval != 0 {
		return
	}
	m.running.Set(float64(b.DecodeSeqs))
	m.queue.Set(float64(sch.Waiting()))
	m.setKV(sch)
	m.sumSeqLens.Set(float64(sch.DecodeContextTokens()))
	m.cacheHitRate.Set(0)
	if gap := at - m.lastDecodeLogAt; gap > 0 {
		m.genThroughput.Set(float64(m.genSinceLog) / gap.Seconds())
	}
	if sch.Params().SpecTokens > 0 && m.specRq > 0 {
		accLen := float64(m.specEmitted) / float64(m.specRq)
		m.specAcceptLength.Set(accLen)
		m.specAcceptRate.Set((accLen - 1) / float64(sch.Params().SpecTokens))
	}
	m.genSinceLog, m.specEmitted, m.specRq = 0, 0, 0
	m.lastDecodeLogAt = at
	m.flushRetracted()
}

func (m *sglangMetrics) setKV(sch *batch.Scheduler) {
	used := sch.KVUsedTokens()
	m.usedTokens.Set(float64(used))
	m.kvUsed.Set(float64(used))
	m.tokenUsage.Set(sch.KVUsage())
	m.kvAvailable.Set(float64(sch.KVFreeBlocks() * m.blockSize))
	m.kvEvictable.Set(float64(sch.KVEvictableBlocks() * m.blockSize))
}

func (m *sglangMetrics) flushRetracted() {
	m.retractedReqs.Set(float64(m.retractedSinceLog))
	m.retractedSinceLog = 0
}

func (m *sglangMetrics) delivered(s *stream, n int, at time.Duration) {
	if s.delivered == 0 {
		m.ttft.Observe(seconds(at - s.arrival))
		return
	}
	m.itl.observe(seconds(at-s.lastDelivery), n)
}

func (m *sglangMetrics) finished(s *stream, at time.Duration) {
	m.promptTokens.Add(float64(s.seq.PromptLen))
	m.generationTokens.Add(float64(s.seq.Output))
	if s.seq.CachedTokens > 0 {
		m.cachedTokens.WithLabelValues("device").Add(float64(s.seq.CachedTokens))
	}
	m.requests.Inc()
	m.e2e.Observe(seconds(at - s.arrival))
	m.retractions.Observe(float64(s.seq.Preemptions))
}

func (m *sglangMetrics) aborted(*stream, time.Duration) { m.abortedReqs.Inc() }
