package timeline

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape/otlp"
)

var runStart = time.Unix(1_800_000_000, 0)

// span is a vLLM llm_request span starting at ms after the run start (on
// the run clock), with its latencies in ms.
func span(trace, reqID string, startMS, queue, prefill, ttft, decode float64) otlp.Span {
	attrs := map[string]any{AttrTimeInQueue: queue / 1e3, AttrTimeInPrefill: prefill / 1e3, AttrTimeToFirstTok: ttft / 1e3, AttrTimeInDecode: decode / 1e3}
	if reqID != "" {
		attrs[AttrRequestID] = reqID
	}
	return otlp.Span{TraceID: trace, Name: "llm_request", Start: runStart.Add(time.Duration(startMS * 1e6)).UnixNano(), Attrs: attrs}
}

func rec(id, trace string, sentMS, firstMS float64) client.Record {
	return client.Record{ID: id, TraceID: trace, Sent: time.Duration(sentMS * 1e6), FirstToken: time.Duration(firstMS * 1e6), End: time.Duration((firstMS + 50) * 1e6)}
}

func TestJoin(t *testing.T) {
	records := []client.Record{
		rec("a", "t-a", 10, 40),  // by trace id
		rec("b", "t-b", 20, 100), // by request id (vLLM's chatcmpl- prefix): its span is in another trace
		rec("c", "t-c", 30, 60),  // no span
		rec("d", "t-d", 40, 0),   // failed: nothing to split
		{ID: "e", ServerID: "srv-e", Sent: 5e6, FirstToken: 25e6},
	}
	spans := []otlp.Span{
		span("t-a", "", 11, 8, 10, 25, 30),              // send 1, pre 7, queue 8, prefill 10, remainder 30-1-25 = 4
		span("other", "chatcmpl-b", 22, 50, 20, 75, 10), // send 2, pre 5, remainder 80-2-75 = 3
		span("t-a", "", 11, 1, 1, 2, 1),                 // duplicate
		span("foreign", "chatcmpl-zzz", 0, 1, 1, 2, 1),  // another client's
		span("nothing", "", 0, 1, 1, 2, 1),              // no ids
		{TraceID: "t-c", Name: "GET /health"},           // not a request span
		span("t-d", "", 41, 1, 1, 2, 1),                 // joins a failed request
		span("x", "srv-e", 6, -1, 1, 2, 1),              // a negative latency
	}
	got := Join(records, spans, runStart)
	ms := func(f float64) time.Duration { return time.Duration(f * 1e6) }
	want := Result{
		Requests: []Parts{
			{ID: "a", TraceID: "t-a", JoinedBy: JoinedByTraceID, Send: ms(1), Preprocess: ms(7), Queue: ms(8), Prefill: ms(10), Remainder: ms(4), Decode: ms(30), TTFT: ms(30)},
			{ID: "b", TraceID: "t-b", JoinedBy: JoinedByRequestID, Send: ms(2), Preprocess: ms(5), Queue: ms(50), Prefill: ms(20), Remainder: ms(3), Decode: ms(10), TTFT: ms(80)},
		},
		Records: 4, Joined: 2, ByTraceID: 1, ByRequestID: 1, Spans: 8,
		SpansUnjoined:   []Count{{SpanBadTiming, 1}, {SpanDuplicate, 1}, {SpanNoToken, 1}, {SpanNoIDs, 1}, {SpanForeign, 1}, {SpanNotTiming, 1}}, // most first, then by reason
		RecordsUnjoined: []Count{{SpanBadTiming, 1}, {RecordNoSpan, 1}},
	}
	// Float seconds round to the nanosecond: allow it.
	approx := cmp.Comparer(func(x, y time.Duration) bool { d := x - y; return d < 2 && d > -2 })
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("Join (-want +got):\n%s", diff)
	}
	for _, p := range got.Requests {
		if sum := p.Send + p.Preprocess + p.Queue + p.Prefill + p.Remainder; sum != p.TTFT {
			t.Errorf("%s: parts add up to %v, TTFT %v", p.ID, sum, p.TTFT)
		}
	}
}
