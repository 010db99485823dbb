package sim

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// SGLang's request tracing (--enable-trace; python/sglang/srt/observability/
// trace.py and req_time_stats.py, decision 2400), as a unified server at
// SGLANG_TRACE_LEVEL=2 exports it: per request
//
//	"<role> Req <rid[:8]>"   root, parented on the request's traceparent (role "" when unified)
//	                         attrs rid (the rid after its last "_"), module "sglang::request";
//	                         at finish gen_ai.usage.*, gen_ai.request.id (the rid),
//	                         gen_ai.request.max_tokens, gen_ai.response.model,
//	                         gen_ai.response.finish_reasons (a JSON list), and the two
//	                         latencies known then (finished_time is set after them):
//	                         time_to_first_token, time_in_model_prefill
//	  "Tokenizer (host:… | pid:…)"          the API server's span: Arrival → dispatch done
//	    tokenize             Arrival → QueueEnter      (tokenized; the built-in engine tokenizes at once)
//	    api_server_dispatch  QueueEnter → QueueEnter   (sent to the scheduler)
//	  "Scheduler [TP 0] (host:… | pid:…)"   the scheduler's span: received → completion
//	    request_process      QueueEnter → QueueEnter   (received → the wait queue)
//	    prefill_waiting      QueueEnter → QueueLeave   (the wait queue → its first batch)
//	    prefill_forward      QueueLeave → PrefillEnd   (→ its prefill's result: the first token)
//	    decode_forward       PrefillEnd → DecodeEnd    (decoding, closed at completion)
//
// The root spans Arrival → DecodeEnd (SGLang's created_time → finished_time
// at the API server). Level 3's per-step decode_loop slices and schedule
// events are not emitted (a span per token); a launched SGLang is run at
// SGLANG_TRACE_LEVEL=2 likewise. Slices are SGLang's default span kind
// (internal); their links to the previous slice are left out.
const (
	sglangScope       = "sglang server"
	sglangModule      = "sglang::request"
	sglangHostID      = "6c6c6d62656e6368" // the host id's first 8 characters; the built-in engine's own
	sglangPID         = 4242
	sglangTokenizer   = "Tokenizer"
	sglangScheduler   = "Scheduler"
	attrCachedTokens  = "gen_ai.usage.cached_tokens"
	attrFinishReason  = "gen_ai.response.finish_reasons"
	attrResponseModel = "gen_ai.response.model"
)

// sglangSpans are t's spans, timed from the engine's truth.
func sglangSpans(t *RequestTruth, _ spanSampling, model string, epoch time.Time) []*tracepb.Span {
	traceID, parent := parseTraceparent(t.Traceparent)
	if traceID == nil {
		// SGLang's TraceCustomIdGenerator draws 64-bit trace ids.
		sum := sha256.Sum256([]byte("llmbench-sim\x00" + t.ID + "\x00" + epoch.String()))
		traceID = append(make([]byte, 8), sum[:8]...)
	}
	last := t.DecodeEnd
	if last == 0 {
		last = t.PrefillEnd
	}
	id := func(name string) []byte {
		sum := sha256.Sum256(append(append([]byte(nil), traceID...), t.ID+"\x00"+name...))
		return sum[:8]
	}
	at := func(d time.Duration) uint64 { return uint64(epoch.Add(d).UnixNano()) }
	span := func(name string, parent []byte, from, to time.Duration, attrs ...*commonpb.KeyValue) *tracepb.Span {
		return &tracepb.Span{TraceId: traceID, SpanId: id(name), ParentSpanId: parent, Name: name,
			Kind: tracepb.Span_SPAN_KIND_INTERNAL, StartTimeUnixNano: at(from), EndTimeUnixNano: at(max(to, from)), Attributes: attrs}
	}
	orig := t.ID[strings.LastIndexByte(t.ID, '_')+1:] // SGLang drops a multi-tokenizer worker prefix
	rootName := " Req " + orig[:min(8, len(orig))]
	finish := t.FinishReason
	if finish == "" {
		finish = "abort"
	}
	sec := func(d time.Duration) float64 { return max(d, 0).Seconds() }
	root := span(rootName, parent, t.Arrival, last,
		strAttr("rid", orig), strAttr("module", sglangModule),
		intAttr(AttrUsageCompletionToks, t.GeneratedTokens), intAttr(AttrUsagePromptTokens, t.PromptTokens),
		intAttr(attrCachedTokens, t.CachedTokens), strAttr(AttrRequestID, t.ID), intAttr(AttrRequestMaxTokens, t.MaxTokens),
		strAttr(attrResponseModel, model), strAttr(attrFinishReason, `["`+finish+`"]`),
		floatAttr(AttrTimeToFirstToken, sec(t.PrefillEnd-t.Arrival)), floatAttr(AttrTimeInPrefill, sec(t.PrefillEnd-t.QueueEnter)))
	thread := func(label, name string, from, to time.Duration, rank bool) *tracepb.Span {
		attrs := []*commonpb.KeyValue{}
		if rank {
			attrs = append(attrs, intAttr("tp_rank", 0))
		}
		attrs = append(attrs, strAttr("host_id", sglangHostID), intAttr("pid", sglangPID), strAttr("thread_label", label))
		return span(name, root.SpanId, from, to, attrs...)
	}
	where := fmt.Sprintf("(host:%s | pid:%d)", sglangHostID[:8], sglangPID)
	tok := thread(sglangTokenizer, sglangTokenizer+where, t.Arrival, t.QueueEnter, false)
	sched := thread(sglangScheduler, sglangScheduler+" [TP 0] "+where, t.QueueEnter, last, true)
	out := []*tracepb.Span{root, tok, sched,
		span("tokenize", tok.SpanId, t.Arrival, t.QueueEnter),
		span("api_server_dispatch", tok.SpanId, t.QueueEnter, t.QueueEnter),
		span("request_process", sched.SpanId, t.QueueEnter, t.QueueEnter),
	}
	if t.QueueLeave == 0 {
		return out // aborted in the queue: SGLang closes what is open
	}
	out = append(out, span("prefill_waiting", sched.SpanId, t.QueueEnter, t.QueueLeave))
	if t.PrefillEnd == 0 {
		return out
	}
	return append(out,
		span("prefill_forward", sched.SpanId, t.QueueLeave, t.PrefillEnd),
		span("decode_forward", sched.SpanId, t.PrefillEnd, last))
}

// speak makes the exporter send dialect's spans: SGLang's request spans
// for the sglang dialect, vLLM's llm_request otherwise.
func (x *spanExporter) speak(dialect string) {
	if x == nil || dialect != DialectSGLang {
		return
	}
	x.scope, x.shape = sglangScope, sglangSpans
	x.resource = []*commonpb.KeyValue{strAttr("service.name", "llmbench-sim")}
}
