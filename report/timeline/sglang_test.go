package timeline

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape/otlp"
	"github.com/llmbench-org/llmbench/scrape/sglangexport"
)

// at is Unix ns ms after the run start.
func at(ms float64) int64 { return runStart.Add(time.Duration(ms * 1e6)).UnixNano() }

func sgSpan(trace, name string, startMS, endMS float64, attrs map[string]any) otlp.Span {
	return otlp.Span{TraceID: trace, Name: name, Start: at(startMS), End: at(endMS), Attrs: attrs}
}

func sgRoot(trace, rid string, startMS, endMS float64) otlp.Span {
	return sgSpan(trace, " Req "+rid, startMS, endMS, map[string]any{AttrSGLangRID: rid, AttrSGLangModule: SGLangModule, AttrRequestID: rid})
}

// TestJoinSGLangSpans: a root span and its stage slices give the parts; a
// root without its stages is unusable; the per-process and stage spans are
// counted as stages; a root whose trace is another's joins by its rid.
func TestJoinSGLangSpans(t *testing.T) {
	records := []client.Record{
		rec("a", "t-a", 10, 60),
		rec("b", "t-b", 20, 90),
		rec("c", "t-c", 30, 70),
	}
	spans := []otlp.Span{
		sgRoot("t-a", "a", 12, 200),
		sgSpan("t-a", "Scheduler [TP 0] (host:abcd | pid:7)", 14, 200, map[string]any{"pid": int64(7), "thread_label": "Scheduler"}),
		sgSpan("t-a", StageTokenize, 12, 13, nil),
		sgSpan("t-a", StagePrefillWaiting, 15, 30, nil),
		sgSpan("t-a", StagePrefillForward, 30, 50, nil),
		sgSpan("t-a", StageDecodeForward, 50, 180, nil),
		// b's trace id was not kept (no traceparent): joined by its rid.
		sgRoot("other", "b", 21, 100),
		sgSpan("other", StagePrefillWaiting, 22, 40, nil),
		sgSpan("other", StagePrefillForward, 40, 80, nil),
		// c's stages never came.
		sgRoot("t-c", "c", 31, 80),
	}
	got := Join(records, spans, runStart)
	ms := func(f float64) time.Duration { return time.Duration(f * 1e6) }
	want := Result{
		Requests: []Parts{
			{ID: "a", TraceID: "t-a", JoinedBy: JoinedByTraceID, Send: ms(2), Preprocess: ms(3), Queue: ms(15), Prefill: ms(20), Remainder: ms(10), Decode: ms(130), TTFT: ms(50)},
			{ID: "b", TraceID: "t-b", JoinedBy: JoinedByRequestID, Send: ms(1), Preprocess: ms(1), Queue: ms(18), Prefill: ms(40), Remainder: ms(10), Decode: ms(20), TTFT: ms(70)},
		},
		Records: 3, Joined: 2, ByTraceID: 1, ByRequestID: 1, Spans: 10,
		SpansUnjoined:   []Count{{SpanStage, 7}, {SpanBadTiming, 1}},
		RecordsUnjoined: []Count{{SpanBadTiming, 1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Join (-want +got):\n%s", diff)
	}
}

// TestJoinExport: export lines join by rid; a line without stamps, a
// foreign one and a second one are counted; the parts come from the
// stamps.
func TestJoinExport(t *testing.T) {
	records := []client.Record{
		rec("a", "t-a", 10, 60),
		rec("b", "t-b", 20, 90),
		rec("c", "t-c", 30, 0),
	}
	line := func(id string, recv, fwd, queue, prefill, fin float64) sglangexport.Record {
		return sglangexport.Record{ID: id, RID: id, Received: at(recv), ForwardEntry: at(fwd), Queue: time.Duration(queue * 1e6), HasQueue: true,
			PrefillDone: at(prefill), Finished: at(fin)}
	}
	lines := []sglangexport.Record{
		line("a", 12, 30, 15, 50, 180),
		line("a", 12, 30, 15, 50, 180),
		{ID: "b", RID: "b"}, // no --enable-metrics
		line("zz", 1, 2, 1, 3, 4),
		line("c", 31, 32, 1, 33, 34),
	}
	got := JoinExport(records, lines, runStart)
	ms := func(f float64) time.Duration { return time.Duration(f * 1e6) }
	want := Result{
		Requests: []Parts{
			{ID: "a", TraceID: "t-a", JoinedBy: JoinedByRequestID, Send: ms(2), Preprocess: ms(3), Queue: ms(15), Prefill: ms(20), Remainder: ms(10), Decode: ms(130), TTFT: ms(50)},
		},
		Records: 2, Joined: 1, ByRequestID: 1, Spans: 5,
		SpansUnjoined:   []Count{{SpanDuplicate, 1}, {ExportUntimed, 1}, {SpanNoToken, 1}, {SpanForeign, 1}},
		RecordsUnjoined: []Count{{RecordNoSpan, 1}},
	}
	approx := cmp.Comparer(func(x, y time.Duration) bool { d := x - y; return d < 2 && d > -2 })
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("JoinExport (-want +got):\n%s", diff)
	}
}
