package report

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/timeline"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape/otlp"
	"github.com/llmbench-org/llmbench/scrape/sglangexport"
)

// TimelineParts name a request's parts in summary.json, in order; the
// first five add up to its TTFT (timeline.Parts).
var TimelineParts = []string{"send", "preprocess", "queue", "prefill", "remainder", "decode", "ttft"}

// timelineWords say where the slowest requests' time went, part by part.
var timelineWords = map[string]string{
	"send": "sending (connection and network to the engine)", "preprocess": "in the engine's preprocessing",
	"queue": "queued", "prefill": "in prefill", "remainder": "between the engine's first token and the client's",
}

// ServerTimeline is the per-request server timeline: the engine's request
// spans joined to the records (report/timeline), the distribution of each
// part over the measured phases, and where the slowest 1 % of TTFT spent it.
type ServerTimeline struct {
	// Source is what the engine's account came from: TimelineFromSpans or
	// TimelineFromExport.
	Source      string  `json:"source"`
	Records     int     `json:"records"` // records with a first token, all phases
	Joined      int     `json:"joined"`
	JoinRate    float64 `json:"join_rate"` // Joined / Records
	ByTraceID   int     `json:"by_trace_id"`
	ByRequestID int     `json:"by_request_id"`
	Spans       int     `json:"spans"`
	// SpansUnjoined and RecordsUnjoined are counted by reason.
	SpansUnjoined   []timeline.Count `json:"spans_unjoined,omitempty"`
	RecordsUnjoined []timeline.Count `json:"records_unjoined,omitempty"`
	// Parts are the distributions (seconds) of each part over the joined
	// requests of the measured phases, keyed by TimelineParts.
	Parts   map[string]Dist  `json:"parts_s"`
	Slowest *TimelineSlowest `json:"slowest,omitempty"`
}

// TimelineSlowest is where the slowest 1 % of TTFT (at least one request)
// spent it: each part's share of their summed TTFT.
type TimelineSlowest struct {
	N        int                `json:"n"`
	MinTTFT  float64            `json:"min_ttft_s"` // the fastest of them
	Share    map[string]float64 `json:"share"`      // send, preprocess, queue, prefill, remainder
	Dominant string             `json:"dominant"`   // the part with the largest share
	Verdict  string             `json:"verdict"`    // "the slowest 1% (3 requests, TTFT ≥ 1.2 s) spent 80% of their TTFT queued"
}

// Where a server timeline's account of the requests came from.
const (
	TimelineFromSpans  = "otlp_spans"    // spans.jsonl: vLLM's llm_request or SGLang's request spans
	TimelineFromExport = "sglang_export" // SGLang's per-request export (sglang-export/)
)

// timelineOf joins the engine's per-request account to the records: its
// spans, else SGLang's export (spans, where both were taken, carry the
// trace ids); nil with neither. The export's skipped lines are said as
// unjoined ones.
func timelineOf(meta rundir.RunMeta, records []client.Record, spans []otlp.Span, export sglangexport.Log) *ServerTimeline {
	var j timeline.Result
	source := TimelineFromSpans
	switch {
	case len(spans) > 0:
		j = timeline.Join(records, spans, meta.StartedAt)
	case len(export.Records) > 0 || export.Skipped > 0:
		source = TimelineFromExport
		j = timeline.JoinExport(records, export.Records, meta.StartedAt)
		if export.Skipped > 0 {
			j.Spans += export.Skipped
			j.SpansUnjoined = append(j.SpansUnjoined, timeline.Count{Reason: fmt.Sprintf("a line that is not a record (the first: %s)", export.FirstProblem), N: export.Skipped})
		}
	default:
		return nil
	}
	t := &ServerTimeline{Source: source, Records: j.Records, Joined: j.Joined, ByTraceID: j.ByTraceID, ByRequestID: j.ByRequestID,
		Spans: j.Spans, SpansUnjoined: j.SpansUnjoined, RecordsUnjoined: j.RecordsUnjoined, Parts: map[string]Dist{}}
	if j.Records > 0 {
		t.JoinRate = float64(j.Joined) / float64(j.Records)
	}
	measured := map[string]bool{}
	for _, ph := range meta.Phases {
		if ph.Measured {
			measured[ph.Name] = true
		}
	}
	var ps []timeline.Parts
	for _, p := range j.Requests {
		if len(measured) == 0 || measured[p.Phase] {
			ps = append(ps, p)
		}
	}
	for _, name := range TimelineParts {
		xs := make([]float64, len(ps))
		for i := range ps {
			xs[i] = partOf(&ps[i], name).Seconds()
		}
		t.Parts[name] = distOf(xs)
	}
	t.Slowest = slowestOf(ps)
	return t
}

func partOf(p *timeline.Parts, name string) time.Duration {
	switch name {
	case "send":
		return p.Send
	case "preprocess":
		return p.Preprocess
	case "queue":
		return p.Queue
	case "prefill":
		return p.Prefill
	case "remainder":
		return p.Remainder
	case "decode":
		return p.Decode
	}
	return p.TTFT
}

// slowestOf is where the slowest 1 % of ps by TTFT spent it; nil without ps.
func slowestOf(ps []timeline.Parts) *TimelineSlowest {
	if len(ps) == 0 {
		return nil
	}
	ps = append([]timeline.Parts(nil), ps...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].TTFT > ps[j].TTFT })
	n := max(int(math.Ceil(float64(len(ps))/100)), 1)
	slow := ps[:n]
	var total time.Duration
	for i := range slow {
		total += slow[i].TTFT
	}
	s := &TimelineSlowest{N: n, MinTTFT: slow[n-1].TTFT.Seconds(), Share: map[string]float64{}}
	for _, name := range TimelineParts[:5] {
		var sum time.Duration
		for i := range slow {
			sum += partOf(&slow[i], name)
		}
		if total > 0 {
			s.Share[name] = float64(sum) / float64(total)
		}
		if s.Dominant == "" || s.Share[name] > s.Share[s.Dominant] {
			s.Dominant = name
		}
	}
	s.Verdict = fmt.Sprintf("the slowest 1%% (%d %s, TTFT ≥ %.3g s) spent %.0f%% of their TTFT %s",
		n, plural(n, "request", "requests"), s.MinTTFT, 100*s.Share[s.Dominant], timelineWords[s.Dominant])
	return s
}
