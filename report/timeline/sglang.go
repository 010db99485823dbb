package timeline

import (
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape/otlp"
	"github.com/llmbench-org/llmbench/scrape/sglangexport"
)

// SGLang's request tracing (python/sglang/srt/observability/trace.py and
// req_time_stats.py, decision 2400): per request a root span named
// "<role> Req <rid[:8]>" (role "" on a unified server), parented on the
// request's traceparent, with attributes rid (the rid after its last "_")
// and module "sglang::request", and at finish gen_ai.request.id (the whole
// rid) and the gen_ai usage and latency attributes; under it one span per
// process (tokenizer, scheduler), and under those the stage slices, each a
// span named after its stage with the request's trace id.
const (
	AttrSGLangRID    = "rid"
	AttrSGLangModule = "module"
	SGLangModule     = "sglang::request"

	StageTokenize       = "tokenize"
	StageDispatch       = "api_server_dispatch"
	StageRequestProcess = "request_process"
	StagePrefillWaiting = "prefill_waiting"
	StagePrefillForward = "prefill_forward"
	StageChunkedPrefill = "chunked_prefill"
	StageDecodeWaiting  = "decode_waiting"
	StageDecodeForward  = "decode_forward"
	StageDecodeLoop     = "decode_loop"
)

var sglangStageNames = map[string]bool{
	StageTokenize: true, StageDispatch: true, StageRequestProcess: true, StagePrefillWaiting: true,
	StagePrefillForward: true, StageChunkedPrefill: true, StageDecodeWaiting: true, StageDecodeForward: true, StageDecodeLoop: true,
}

// isSGLangRoot says whether sp is an SGLang request's root span.
func isSGLangRoot(sp *otlp.Span) bool {
	return sp.String(AttrSGLangModule) == SGLangModule && sp.String(AttrSGLangRID) != "" && strings.Contains(sp.Name, "Req ")
}

// isSGLangStage says whether sp is one of an SGLang request's stage slices
// or its per-process span (which carries the process's pid and thread_label).
func isSGLangStage(sp *otlp.Span) bool {
	if sglangStageNames[sp.Name] {
		return true
	}
	_, pid := sp.Attrs["pid"]
	return pid && sp.String("thread_label") != ""
}

// sglangRequestID is the id an SGLang root span names its request by: the
// whole rid (gen_ai.request.id, set at finish), else the rid attribute.
func sglangRequestID(sp *otlp.Span) string {
	if id := sp.String(AttrRequestID); id != "" {
		return id
	}
	return sp.String(AttrSGLangRID)
}

// stageTimes are the stage slices of one SGLang trace: the first of each
// stage's start and end, and the last decode slice's end.
type stageTimes struct {
	waitStart, waitEnd, prefillEnd, decodeEnd int64
}

// sglangStages indexes the stage slices by trace id.
func sglangStages(spans []otlp.Span) map[string]*stageTimes {
	out := map[string]*stageTimes{}
	for i := range spans {
		sp := &spans[i]
		if !sglangStageNames[sp.Name] {
			continue
		}
		st := out[sp.TraceID]
		if st == nil {
			st = &stageTimes{}
			out[sp.TraceID] = st
		}
		switch sp.Name {
		case StagePrefillWaiting:
			if st.waitStart == 0 || sp.Start < st.waitStart {
				st.waitStart, st.waitEnd = sp.Start, sp.End
			}
		case StagePrefillForward:
			if st.prefillEnd == 0 || sp.End < st.prefillEnd {
				st.prefillEnd = sp.End
			}
		case StageDecodeForward, StageDecodeLoop:
			st.decodeEnd = max(st.decodeEnd, sp.End)
		}
	}
	return out
}

// splitSGLang is r's timeline from its SGLang root span and its trace's
// stages: send = the root's start (the API server's receipt) − Sent;
// preprocess = the wait queue's entry − the root's start (tokenizing,
// dispatch, the scheduler's intake); queue = prefill_waiting; prefill = the
// end of prefill_forward − the end of waiting (the first token made);
// remainder = the rest of the client's TTFT; decode = the last decode
// slice's end (the root's end without one) − the end of prefill.
func splitSGLang(r *client.Record, root *otlp.Span, st *stageTimes, runStart time.Time) (Parts, bool) {
	if st == nil || st.waitStart == 0 || st.prefillEnd == 0 {
		return Parts{}, false
	}
	decodeEnd := st.decodeEnd
	if decodeEnd == 0 {
		decodeEnd = root.End
	}
	return partsOf(r, runStart, root.Start, st.waitStart, st.waitEnd, st.prefillEnd, decodeEnd)
}

// partsOf splits r's TTFT at the engine's wall-clock stamps (Unix ns):
// arrival, its entry to and exit from the wait queue, its first token made,
// its last. The one decomposition of a request from stamps (SGLang's spans
// and export); false when they are out of order.
func partsOf(r *client.Record, runStart time.Time, arrival, queueIn, queueOut, first, last int64) (Parts, bool) {
	// Stamps read from float seconds (the export's) are within a quarter
	// of a microsecond: two equal instants may come out 1 µs apart either
	// way, which is not disorder.
	stamps := []*int64{&arrival, &queueIn, &queueOut, &first, &last}
	for i := 1; i < len(stamps); i++ {
		if d := *stamps[i-1] - *stamps[i]; d > 0 && d <= int64(time.Microsecond) {
			*stamps[i] = *stamps[i-1]
		}
	}
	if !(arrival <= queueIn && queueIn <= queueOut && queueOut <= first && first <= last) {
		return Parts{}, false
	}
	ttft := r.FirstToken - r.Sent
	send := time.Duration(arrival - runStart.Add(r.Sent).UnixNano())
	pre, queue, prefill := time.Duration(queueIn-arrival), time.Duration(queueOut-queueIn), time.Duration(first-queueOut)
	return Parts{
		ID: r.ID, TraceID: r.TraceID, Phase: r.Phase,
		Send: send, Preprocess: pre, Queue: queue, Prefill: prefill,
		Remainder: ttft - send - pre - queue - prefill, Decode: time.Duration(last - first), TTFT: ttft,
	}, true
}

// Reasons an export line does not join.
const (
	ExportNoID    = "it carries no id" // ParseLine refuses these: kept for completeness
	ExportUntimed = "it carries no timestamps (SGLang runs without --enable-metrics)"
)

// JoinExport joins SGLang's per-request export lines to records by request
// id (the rid: llmbench sends its request id as rid), as Join joins spans:
// the same Result, the same Parts. A line's stamps: arrival =
// request_received_ts, queue entry = forward_entry_time − queue_time, queue
// exit = forward_entry_time, first token = prefill_finished_time, last =
// request_finished_ts.
func JoinExport(records []client.Record, lines []sglangexport.Record, runStart time.Time) Result {
	res := join(records, len(lines), func(k int) (string, string, string) {
		l := &lines[k]
		if !l.Timed() {
			return "", "", ExportUntimed
		}
		id := l.ID
		if l.RID != "" {
			id = l.RID
		}
		return "", id, ""
	}, func(r *client.Record, k int) (Parts, bool) {
		l := &lines[k]
		last := l.Finished
		if last == 0 {
			last = l.PrefillDone
		}
		return partsOf(r, runStart, l.Received, l.ForwardEntry-int64(l.Queue), l.ForwardEntry, l.PrefillDone, last)
	}, ExportNoID)
	res.Spans = len(lines)
	return res
}
