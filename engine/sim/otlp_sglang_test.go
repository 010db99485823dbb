package sim

import (
	"encoding/hex"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// TestSGLangSpanShape: SGLang's spans of one request, against its truth:
// the root in the traceparent's trace and parented on its span, named
// " Req <rid[:8]>" with rid (after the last "_"), module and the gen_ai
// attributes SGLang sets before finishing; per-process spans under it;
// each stage slice under its process at the truth's times.
func TestSGLangSpanShape(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tr := &RequestTruth{ID: "w1_request-42", Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		Arrival: ms(10), QueueEnter: ms(12), QueueLeave: ms(30), PrefillStart: ms(31), PrefillEnd: ms(50), DecodeEnd: ms(90),
		PromptTokens: 7, GeneratedTokens: 5, CachedTokens: 2, MaxTokens: 5, FinishReason: "length"}
	epoch := time.Unix(1_800_000_000, 0)
	spans := sglangSpans(tr, spanSampling{}, "m", epoch)
	byName := map[string]*tracepb.Span{}
	for _, sp := range spans {
		if hex.EncodeToString(sp.TraceId) != "0af7651916cd43dd8448eb211c80319c" {
			t.Errorf("%s: trace %x", sp.Name, sp.TraceId)
		}
		byName[sp.Name] = sp
	}
	root := byName[" Req request-"]
	if root == nil || hex.EncodeToString(root.ParentSpanId) != "b7ad6b7169203331" {
		t.Fatalf("no root parented on the traceparent: %v", spans)
	}
	attrs := map[string]any{}
	for _, kv := range root.Attributes {
		switch {
		case kv.Value.GetStringValue() != "":
			attrs[kv.Key] = kv.Value.GetStringValue()
		case kv.Value.GetDoubleValue() != 0:
			attrs[kv.Key] = kv.Value.GetDoubleValue()
		default:
			attrs[kv.Key] = kv.Value.GetIntValue()
		}
	}
	for k, want := range map[string]any{
		"rid": "request-42", "module": "sglang::request", "gen_ai.request.id": "w1_request-42",
		"gen_ai.usage.prompt_tokens": int64(7), "gen_ai.usage.completion_tokens": int64(5), "gen_ai.usage.cached_tokens": int64(2),
		"gen_ai.response.finish_reasons": `["length"]`, "gen_ai.latency.time_to_first_token": 0.04, "gen_ai.latency.time_in_model_prefill": 0.038,
	} {
		if got := attrs[k]; got != want {
			if f, ok := got.(float64); !ok || f-want.(float64) > 1e-9 || want.(float64)-f > 1e-9 {
				t.Errorf("root %s = %v, want %v", k, got, want)
			}
		}
	}
	if _, ok := attrs["gen_ai.latency.e2e"]; ok {
		t.Error("e2e on the root: SGLang sets the root's latencies before finished_time")
	}
	at := func(d time.Duration) uint64 { return uint64(epoch.Add(d).UnixNano()) }
	tok, sched := byName["Tokenizer(host:6c6c6d62 | pid:4242)"], byName["Scheduler [TP 0] (host:6c6c6d62 | pid:4242)"]
	if tok == nil || sched == nil || string(tok.ParentSpanId) != string(root.SpanId) || string(sched.ParentSpanId) != string(root.SpanId) {
		t.Fatalf("process spans: %v", spans)
	}
	for _, c := range []struct {
		name     string
		parent   *tracepb.Span
		from, to time.Duration
	}{
		{" Req request-", nil, tr.Arrival, tr.DecodeEnd},
		{"tokenize", tok, tr.Arrival, tr.QueueEnter},
		{"prefill_waiting", sched, tr.QueueEnter, tr.QueueLeave},
		{"prefill_forward", sched, tr.QueueLeave, tr.PrefillEnd},
		{"decode_forward", sched, tr.PrefillEnd, tr.DecodeEnd},
	} {
		sp := byName[c.name]
		if sp == nil || sp.StartTimeUnixNano != at(c.from) || sp.EndTimeUnixNano != at(c.to) ||
			(c.parent != nil && string(sp.ParentSpanId) != string(c.parent.SpanId)) {
			t.Errorf("%s: %v", c.name, sp)
		}
	}
	// Without a traceparent: a root of a 64-bit trace id of its own.
	tr.Traceparent = ""
	own := sglangSpans(tr, spanSampling{}, "m", epoch)
	if id := own[0].TraceId; len(id) != 16 || hex.EncodeToString(id[:8]) != "0000000000000000" || len(own[0].ParentSpanId) != 0 {
		t.Errorf("own trace %x, parent %x", id, own[0].ParentSpanId)
	}
}
