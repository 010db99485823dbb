package sim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// vLLM's request span (vllm/tracing/utils.py SpanAttributes, exported from
// vllm/v1/engine/output_processor.py do_tracing): one SERVER span named
// llm_request per finished request, started at the request's arrival,
// parented on its traceparent, its latencies in seconds (floats), its token
// counts as ints, its gen_ai.request.id the engine's external request id
// (the chunks' "id"), its sampling parameters when non-zero (temperature and
// top_p floats, max_tokens and n ints). vLLM 0.32 defines
// gen_ai.response.model but does not send it (checked against the real one,
// conformance/vllm, decision 2420).
const (
	SpanLLMRequest          = "llm_request"
	AttrRequestID           = "gen_ai.request.id"
	AttrRequestMaxTokens    = "gen_ai.request.max_tokens"
	AttrRequestN            = "gen_ai.request.n"
	AttrRequestTemperature  = "gen_ai.request.temperature"
	AttrRequestTopP         = "gen_ai.request.top_p"
	AttrUsagePromptTokens   = "gen_ai.usage.prompt_tokens"
	AttrUsageCompletionToks = "gen_ai.usage.completion_tokens"
	AttrTimeInQueue         = "gen_ai.latency.time_in_queue"
	AttrTimeToFirstToken    = "gen_ai.latency.time_to_first_token"
	AttrE2E                 = "gen_ai.latency.e2e"
	AttrTimeInPrefill       = "gen_ai.latency.time_in_model_prefill"
	AttrTimeInDecode        = "gen_ai.latency.time_in_model_decode"
	AttrTimeInInference     = "gen_ai.latency.time_in_model_inference"
	// The instrumentation scope: vLLM makes the span with
	// trace.get_tracer(__name__) in vllm/tracing/otel.py, so the scope is
	// that module's name, not the tracer provider's "vllm.llm_engine",
	// which goes in the resource (vllm.instrumenting_module_name).
	spanScope = "vllm.tracing.otel"
	// What vLLM's init_otel_tracer puts in the resource. The service name
	// is the one difference kept: the OTel SDK's default there is
	// "unknown_service:python", which would hide which engine a trace
	// viewer is showing.
	resourceModule = "vllm.llm_engine"
	serviceName    = "llmbench-sim"
)

// spanSampling is what a request asked of the sampler, as vLLM's span
// reports it: temperature and top_p with vLLM's defaults applied (1.0 when
// the request gives none and the model's generation config neither, as the
// built-in engine's models have none), top_p forced to 1 for greedy
// sampling (SamplingParams: temperature < 1e-5), as vLLM does.
type spanSampling struct {
	temperature, topP float64
}

// submit hands s to the scheduler (as e.post(opAdd, s)), first stamping
// what its trace span needs: the moment vLLM would stamp its arrival_time
// (the request parsed, templated and tokenized) and the request's sampling
// parameters.
func (e *Engine) submit(s *stream, t *RequestTruth, req *chatRequest) {
	s.sampling = samplingOf(req)
	t.Submitted = e.now()
	e.post(opAdd, s)
}

// samplingOf reads req's temperature and top_p as vLLM's SamplingParams
// would hold them.
func samplingOf(req *chatRequest) spanSampling {
	sp := spanSampling{temperature: 1, topP: 1}
	if req.Temperature != nil {
		sp.temperature = *req.Temperature
	}
	if req.TopP != nil {
		sp.topP = *req.TopP
	}
	if sp.temperature < 1e-5 {
		sp.topP = 1
	}
	return sp
}

// Batching as the OTel SDK's BatchSpanProcessor does by default: up to 512
// spans an export, every 5 s at the latest (here 100 ms: a run's spans are
// read right after it), a queue of 2048 whose overflow is dropped and
// counted. The queue is larger here (1<<16): a dropped span is a request
// that does not join, and the acceptance asks 99.9 % to.
const (
	spanBatch    = 512
	spanInterval = 100 * time.Millisecond
	spanQueue    = 1 << 16
)

// spanExporter sends llm_request spans over OTLP/HTTP protobuf to
// Config.OTLPTracesEndpoint. A nil one exports nothing.
type spanExporter struct {
	url   string
	model string
	epoch time.Time
	http  *http.Client
	// scope, resource and shape are the dialect's tracer name, resource
	// attributes and spans of a request (vLLM's llm_request; SGLang's,
	// otlp_sglang.go).
	scope    string
	resource []*commonpb.KeyValue
	shape    func(t *RequestTruth, sampling spanSampling, model string, epoch time.Time) []*tracepb.Span

	mu      sync.Mutex
	pending []*tracepb.Span
	kick    chan struct{}
	done    chan struct{}
	stopped chan struct{}

	Exported, Dropped, Failed atomic.Int64
	lastErr                   atomic.Value // string
}

func newSpanExporter(url, model, dialect string, epoch time.Time) *spanExporter {
	if url == "" {
		return nil
	}
	x := &spanExporter{url: url, model: model, epoch: epoch, http: &http.Client{Timeout: 10 * time.Second},
		scope: spanScope, shape: vllmSpans,
		resource: []*commonpb.KeyValue{strAttr("service.name", serviceName),
			strAttr("vllm.instrumenting_module_name", resourceModule), strAttr("vllm.process_id", strconv.Itoa(os.Getpid()))},
		kick: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	x.speak(dialect) // otlp_sglang.go
	go x.loop()
	return x
}

// export queues t's span: once per finished request, never per chunk.
func (x *spanExporter) export(t *RequestTruth, sampling spanSampling) {
	if x == nil {
		return
	}
	sps := x.shape(t, sampling, x.model, x.epoch)
	x.mu.Lock()
	full := len(x.pending)+len(sps) > spanQueue
	if !full {
		x.pending = append(x.pending, sps...)
	}
	n := len(x.pending)
	x.mu.Unlock()
	if full {
		x.Dropped.Add(1)
		return
	}
	if n >= spanBatch {
		select {
		case x.kick <- struct{}{}:
		default:
		}
	}
}

func (x *spanExporter) loop() {
	defer close(x.stopped)
	tick := time.NewTicker(spanInterval)
	defer tick.Stop()
	for {
		select {
		case <-x.done:
			x.flush()
			return
		case <-tick.C:
		case <-x.kick:
		}
		x.flush()
	}
}

// flush sends everything pending, spanBatch spans an export.
func (x *spanExporter) flush() {
	for {
		x.mu.Lock()
		n := min(len(x.pending), spanBatch)
		batch := append([]*tracepb.Span(nil), x.pending[:n]...)
		x.pending = x.pending[n:]
		x.mu.Unlock()
		if n == 0 {
			return
		}
		if err := x.post(batch); err != nil {
			x.Failed.Add(int64(n))
			x.lastErr.Store(err.Error())
			continue
		}
		x.Exported.Add(int64(n))
	}
}

func (x *spanExporter) post(spans []*tracepb.Span) error {
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource:   &resourcepb.Resource{Attributes: x.resource},
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: &commonpb.InstrumentationScope{Name: x.scope}, Spans: spans}},
	}}}
	body, err := proto.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, x.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := x.http.Do(hreq)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("otlp export: %s", resp.Status)
	}
	return nil
}

// close sends what is pending and stops; it says what was lost.
func (x *spanExporter) close() error {
	if x == nil {
		return nil
	}
	close(x.done)
	<-x.stopped
	if f := x.Failed.Load(); f > 0 {
		msg, _ := x.lastErr.Load().(string)
		return fmt.Errorf("otlp: %d spans not exported: %s", f, msg)
	}
	if d := x.Dropped.Load(); d > 0 {
		return fmt.Errorf("otlp: %d spans dropped (queue full)", d)
	}
	return nil
}

// requestSpan is vLLM's llm_request span for t, timed from the engine's
// truth (the clock offsets turned into wall time at the engine's epoch).
// vLLM's arrival_time is stamped once the request is templated and
// tokenized (Submitted here, Arrival for a truth without it):
//
//	time_in_queue          = QueueLeave − QueueEnter   (scheduled_ts − queued_ts)
//	time_in_model_prefill  = PrefillEnd − QueueLeave   (first_token_ts − scheduled_ts)
//	time_in_model_decode   = DecodeEnd − PrefillEnd    (last_token_ts − first_token_ts)
//	time_in_model_inference= DecodeEnd − QueueLeave    (last_token_ts − scheduled_ts)
//	time_to_first_token    = PrefillEnd − Submitted    (first_token_ts − arrival_time)
//	e2e                    = DecodeEnd − Submitted     (the finishing iteration − arrival_time)
//
// The span starts at Submitted and ends at Submitted + e2e, as vLLM's does
// (start_time=arrival_time, ended when the finished output is processed).
func requestSpan(t *RequestTruth, sampling spanSampling, epoch time.Time) *tracepb.Span {
	traceID, parent := parseTraceparent(t.Traceparent)
	if traceID == nil {
		// No traceparent: a root span in a trace of its own, as vLLM's.
		sum := sha256.Sum256([]byte("llmbench-sim\x00" + t.ChunkID + "\x00" + epoch.String()))
		traceID = sum[:16]
	}
	sum := sha256.Sum256(append(append([]byte(nil), traceID...), t.ChunkID...))
	last := t.DecodeEnd
	if last == 0 {
		last = t.PrefillEnd
	}
	arrival := t.Arrival
	if t.Submitted > 0 {
		arrival = t.Submitted
	}
	start := epoch.Add(arrival).UnixNano()
	sec := func(d time.Duration) float64 { return max(d, 0).Seconds() }
	attrs := []*commonpb.KeyValue{
		strAttr(AttrRequestID, t.ChunkID),
		intAttr(AttrRequestMaxTokens, t.MaxTokens),
		intAttr(AttrRequestN, max(t.Choices, 1)),
		intAttr(AttrUsagePromptTokens, t.PromptTokens),
		intAttr(AttrUsageCompletionToks, t.GeneratedTokens),
		floatAttr(AttrTimeToFirstToken, sec(t.PrefillEnd-arrival)),
		floatAttr(AttrE2E, sec(last-arrival)),
		floatAttr(AttrTimeInQueue, sec(t.QueueLeave-t.QueueEnter)),
		floatAttr(AttrTimeInPrefill, sec(t.PrefillEnd-t.QueueLeave)),
		floatAttr(AttrTimeInDecode, sec(last-t.PrefillEnd)),
		floatAttr(AttrTimeInInference, sec(last-t.QueueLeave)),
	}
	// vLLM adds each only when it is non-zero ("if req_state.temperature:").
	if sampling.temperature != 0 {
		attrs = append(attrs, floatAttr(AttrRequestTemperature, sampling.temperature))
	}
	if sampling.topP != 0 {
		attrs = append(attrs, floatAttr(AttrRequestTopP, sampling.topP))
	}
	return &tracepb.Span{
		TraceId: traceID, SpanId: sum[:8], ParentSpanId: parent,
		Name: SpanLLMRequest, Kind: tracepb.Span_SPAN_KIND_SERVER,
		StartTimeUnixNano: uint64(start), EndTimeUnixNano: uint64(start + int64(max(last-arrival, 0))),
		Attributes: attrs,
	}
}

// parseTraceparent reads a W3C traceparent ("00-<32 hex>-<16 hex>-<2 hex>");
// nil ids for anything else, as an OTel propagator ignores a bad header.
// vllmSpans is vLLM's one llm_request span of t (the model is not an
// attribute vLLM sends).
func vllmSpans(t *RequestTruth, sampling spanSampling, _ string, epoch time.Time) []*tracepb.Span {
	return []*tracepb.Span{requestSpan(t, sampling, epoch)}
}

func parseTraceparent(v string) (traceID, spanID []byte) {
	if len(v) < 55 || v[2] != '-' || v[35] != '-' || v[52] != '-' || v[:2] == "ff" {
		return nil, nil
	}
	tid, err1 := hex.DecodeString(v[3:35])
	sid, err2 := hex.DecodeString(v[36:52])
	if err1 != nil || err2 != nil || binary.BigEndian.Uint64(tid[:8])|binary.BigEndian.Uint64(tid[8:]) == 0 || binary.BigEndian.Uint64(sid) == 0 {
		return nil, nil
	}
	return tid, sid
}

func strAttr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func intAttr(k string, v int) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: int64(v)}}}
}

func floatAttr(k string, v float64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v}}}
}

// Epoch is the wall time of the engine clock's zero: RequestTruth's offsets
// are time after it, and the spans' wall times are Epoch plus those.
func (e *Engine) Epoch() time.Time { return e.epoch }
