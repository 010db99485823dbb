// Package timeline joins an engine's per-request spans (vLLM's llm_request,
// received by scrape/otlp) to the client's records, by trace id first and by
// request id second, and splits each joined request's time to first token
// into where it went: the send (client to engine arrival: connection wait
// and set-up, writing, network), the engine's preprocessing, queue and
// prefill, and the remainder (engine first token to client receipt:
// detokenizing, flushing, proxies, network); decode beside it. Spans that
// do not join are counted with why. Decision 1900.
package timeline

import (
	"math"
	"sort"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape/otlp"
)

// vLLM's llm_request attributes (vllm/tracing.py SpanAttributes), all
// latencies in seconds.
const (
	AttrRequestID      = "gen_ai.request.id"
	AttrTimeInQueue    = "gen_ai.latency.time_in_queue"
	AttrTimeToFirstTok = "gen_ai.latency.time_to_first_token"
	AttrE2E            = "gen_ai.latency.e2e"
	AttrTimeInPrefill  = "gen_ai.latency.time_in_model_prefill"
	AttrTimeInDecode   = "gen_ai.latency.time_in_model_decode"
)

// Parts is one joined request's timeline. Send + Preprocess + Queue +
// Prefill + Remainder = TTFT, the client's time from handing the request to
// the transport to its first token (Record.FirstToken − Record.Sent: the
// client's send delay included, as the send is one of the parts).
type Parts struct {
	ID       string        `json:"id"`
	TraceID  string        `json:"trace_id,omitempty"`
	Phase    string        `json:"phase,omitempty"`
	JoinedBy string        `json:"joined_by"` // JoinedByTraceID or JoinedByRequestID
	Send     time.Duration `json:"send_ns"`   // Sent → the span's start (the engine's arrival); across clocks: see Send's note in Join
	// Preprocess is the engine's time from arrival to its queue and from
	// its first token to the output's processing (vLLM: the hand-over to
	// the engine core process and back; it stamps arrival after templating
	// and tokenizing, which therefore fall in Send):
	// time_to_first_token − time_in_queue − time_in_model_prefill.
	Preprocess time.Duration `json:"preprocess_ns"`
	Queue      time.Duration `json:"queue_ns"`
	Prefill    time.Duration `json:"prefill_ns"`
	Remainder  time.Duration `json:"remainder_ns"` // the engine's first token → the client's
	Decode     time.Duration `json:"decode_ns"`    // time_in_model_decode
	TTFT       time.Duration `json:"ttft_ns"`
}

// How a request was joined.
const (
	JoinedByTraceID   = "trace_id"
	JoinedByRequestID = "request_id"
)

// Reasons a span or a record does not join.
const (
	SpanForeign   = "neither its trace id nor its request id is one this run recorded (another client's traffic, llmbench's own warm-up or calibration requests, or a span of an earlier run)"
	SpanNoIDs     = "its trace id is not this run's and it carries no gen_ai.request.id (the engine was not given or did not keep the traceparent)"
	SpanDuplicate = "a second span for a request already joined"
	SpanNotTiming = "not a request span: it carries no gen_ai.latency attributes (another span of the engine's)"
	SpanStage     = "an SGLang stage span (tokenize, prefill_waiting, prefill_forward, decode_forward, …): read with its request's root span"
	SpanBadTiming = "a latency attribute is missing, negative or not a number"
	SpanNoToken   = "its request has no first token (it failed, or was sent with stream:false): nothing to split"
	RecordNoSpan  = "no span arrived for it (the engine does not trace, lost the span, or exported it after the run)"
	RecordNoToken = "it has no first token (a failure, or stream:false): nothing to split"
)

// Count is how many spans or records share one reason.
type Count struct {
	Reason string `json:"reason"`
	N      int    `json:"n"`
}

// Result is the join of a run's spans to its records.
type Result struct {
	Requests []Parts `json:"requests"` // in record order
	// Records is how many records had a first token (what can join);
	// Joined how many of them did.
	Records int `json:"records"`
	Joined  int `json:"joined"`
	// ByTraceID and ByRequestID split Joined by how.
	ByTraceID   int `json:"by_trace_id"`
	ByRequestID int `json:"by_request_id"`
	// Spans is every span given; SpansUnjoined those that joined no record,
	// by reason, as RecordsUnjoined the records without a span.
	Spans           int     `json:"spans"`
	SpansUnjoined   []Count `json:"spans_unjoined,omitempty"`
	RecordsUnjoined []Count `json:"records_unjoined,omitempty"`
}

// Join joins spans to records. runStart is the wall time of the run
// clock's origin (run.json's started_at): a span's start is wall time on
// the engine's host, a record's times are offsets on the client's monotonic
// clock, so Send and Remainder (not their sum) carry the two hosts' clock
// offset; on one host they are exact. vLLM's llm_request spans and SGLang's
// request root spans (sglang.go, their stage spans read with them) are the
// request spans; every other span is counted as not one.
func Join(records []client.Record, spans []otlp.Span, runStart time.Time) Result {
	stages := sglangStages(spans)
	res := join(records, len(spans), func(k int) (string, string, string) {
		sp := &spans[k]
		if _, ok := sp.Float(AttrTimeInQueue); ok {
			return sp.TraceID, sp.String(AttrRequestID), ""
		}
		if isSGLangRoot(sp) {
			return sp.TraceID, sglangRequestID(sp), ""
		}
		if isSGLangStage(sp) {
			return "", "", SpanStage
		}
		return "", "", SpanNotTiming
	}, func(r *client.Record, k int) (Parts, bool) {
		if sp := &spans[k]; isSGLangRoot(sp) {
			return splitSGLang(r, sp, stages[sp.TraceID], runStart)
		}
		return split(r, &spans[k], runStart)
	}, SpanNoIDs)
	res.Spans = len(spans)
	return res
}

// join is the one join of engine accounts of requests (spans, export
// lines) to records: by trace id first, else by request id. n is how
// many accounts there are; ids gives account k's trace id, request id and,
// when it is not a request's account, why (then it is counted and skipped);
// split turns a joined record and its account into Parts (false: the
// account's times are unusable). noIDs is the reason for an account with
// neither a trace id of this run nor a request id.
func join(records []client.Record, n int, ids func(k int) (traceID, requestID, skip string),
	split func(r *client.Record, k int) (Parts, bool), noIDs string) Result {
	var res Result
	byTrace := make(map[string]int, len(records))
	byID := make(map[string]int, 3*len(records))
	for i := range records {
		r := &records[i]
		if r.TraceID != "" {
			byTrace[r.TraceID] = i
		}
		for _, id := range requestIDs(r) {
			byID[id] = i
		}
	}
	accountOf := make([]int, len(records)) // 1 + the account's index; 0 = none yet
	how := make([]string, len(records))
	out := map[string]int{}
	for k := range n {
		traceID, rid, skip := ids(k)
		if skip != "" {
			out[skip]++
			continue
		}
		by := JoinedByTraceID
		i, ok := byTrace[traceID]
		if !ok || traceID == "" {
			if i, ok = byID[rid]; !ok || rid == "" {
				if rid == "" {
					out[noIDs]++
				} else {
					out[SpanForeign]++
				}
				continue
			}
			by = JoinedByRequestID
		}
		if accountOf[i] != 0 {
			out[SpanDuplicate]++
			continue
		}
		accountOf[i], how[i] = k+1, by
	}
	recordsOut := map[string]int{}
	for i := range records {
		r := &records[i]
		if r.FirstToken == 0 {
			recordsOut[RecordNoToken]++
			if accountOf[i] != 0 {
				out[SpanNoToken]++
			}
			continue
		}
		res.Records++
		if accountOf[i] == 0 {
			recordsOut[RecordNoSpan]++
			continue
		}
		p, ok := split(r, accountOf[i]-1)
		if !ok {
			out[SpanBadTiming]++
			recordsOut[SpanBadTiming]++
			continue
		}
		p.JoinedBy = how[i]
		res.Joined++
		if how[i] == JoinedByTraceID {
			res.ByTraceID++
		} else {
			res.ByRequestID++
		}
		res.Requests = append(res.Requests, p)
	}
	delete(recordsOut, RecordNoToken) // not a join failure: said by Records
	res.SpansUnjoined, res.RecordsUnjoined = counts(out), counts(recordsOut)
	return res
}

// requestIDs are the ids an engine may put in gen_ai.request.id for r: the
// id the client sent, the id the chunks carried, and vLLM's
// "chatcmpl-"/"cmpl-" prefixes on the sent one (vLLM names a request
// chatcmpl-<X-Request-Id>).
func requestIDs(r *client.Record) []string {
	ids := []string{}
	if r.ID != "" {
		ids = append(ids, r.ID, "chatcmpl-"+r.ID, "cmpl-"+r.ID)
	}
	if r.ServerID != "" {
		ids = append(ids, r.ServerID)
	}
	return ids
}

// split is r's timeline from its span; ok is false when the span's
// latencies are unusable.
func split(r *client.Record, sp *otlp.Span, runStart time.Time) (Parts, bool) {
	var sec [4]float64
	for i, k := range []string{AttrTimeInQueue, AttrTimeInPrefill, AttrTimeToFirstTok, AttrTimeInDecode} {
		v, ok := sp.Float(k)
		if !ok || v < 0 || v > 1e6 {
			return Parts{}, false
		}
		sec[i] = v
	}
	d := func(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }
	queue, prefill, ttftEngine, decode := d(sec[0]), d(sec[1]), d(sec[2]), d(sec[3])
	ttft := r.FirstToken - r.Sent
	send := time.Duration(sp.Start - runStart.Add(r.Sent).UnixNano())
	return Parts{
		ID: r.ID, TraceID: r.TraceID, Phase: r.Phase,
		Send: send, Preprocess: ttftEngine - queue - prefill, Queue: queue, Prefill: prefill,
		Remainder: ttft - send - ttftEngine, Decode: decode, TTFT: ttft,
	}, true
}

func counts(m map[string]int) []Count {
	var out []Count
	for reason, n := range m {
		out = append(out, Count{Reason: reason, N: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].N != out[j].N {
			return out[i].N > out[j].N
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}
