package peers

import (
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/sentload"
	"github.com/llmbench-org/llmbench/rundir"
)

// Part names of a difference.
const (
	PartOwnData   = "the tool's figure vs its own per-request data"
	PartQuantile  = "quantile estimator"
	PartMetric    = "what the metric is"
	PartStart     = "where the clock starts"
	PartEnd       = "where E2E ends"
	PartPerChunk  = "tokens per chunk the file does not keep"
	PartNoRequest = "no per-request data"
)

// Part is one definitional part of a difference, in seconds.
type Part struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	Says    string  `json:"says"`
}

// Line is one metric's statistic of a peer's result beside an llmbench
// run's, and why they differ. Total = the sum of Parts + Measurement.
type Line struct {
	Metric string `json:"metric"`
	Stat   string `json:"stat"`
	// Tool is the figure as the tool defines it (its own, or recomputed
	// from its per-request data when it reported none); absent when the
	// tool has no such metric.
	Tool *float64 `json:"tool,omitempty"`
	// ToolUnderLlmbench is the tool's per-request data under llmbench's
	// definitions; absent without per-request data.
	ToolUnderLlmbench *float64 `json:"tool_under_llmbench,omitempty"`
	Run               *float64 `json:"run,omitempty"` // the llmbench run's figure
	Total             *float64 `json:"total,omitempty"`
	Parts             []Part   `json:"parts,omitempty"`
	// Definitional is the sum of Parts; Measurement what remains.
	Definitional *float64 `json:"definitional,omitempty"`
	Measurement  *float64 `json:"measurement,omitempty"`
}

// Explanation is one peer result beside one llmbench run.
type Explanation struct {
	Result Result   `json:"result"`
	Run    string   `json:"run,omitempty"` // the run directory ("" = the result alone)
	Lines  []Line   `json:"lines"`
	Notes  []string `json:"notes,omitempty"`
	// ToolLoad is the load the tool sent, from its per-request data (nil
	// without it); Load says whether it is the run's (nil without a run).
	ToolLoad *sentload.Fingerprint `json:"tool_load,omitempty"`
	Load     *sentload.Verdict     `json:"same_load,omitempty"`
}

// LoadOf fingerprints the load a peer's result sent, from its per-request
// data (every request, failed ones included; its recorded lengths and
// start times); nil without per-request data.
func LoadOf(res Result) *sentload.Fingerprint {
	if res.Requests == nil {
		return nil
	}
	reqs := make([]sentload.Request, 0, len(res.Requests))
	for _, r := range res.Requests {
		reqs = append(reqs, sentload.Request{At: r.Start, HasAt: r.HasStart, Prompt: r.PromptLen, Output: r.OutputLen})
	}
	fp := sentload.Of(reqs, "recorded")
	return &fp
}

// RunRecords reads an llmbench run's records of its measured phases, the
// duplicates dropped, with their chunks: what the run side of an
// explanation is computed from.
func RunRecords(dir string) ([]client.Record, error) {
	recs, _, err := runRecords(dir)
	return recs, err
}

func runRecords(dir string) ([]client.Record, rundir.RunMeta, error) {
	meta, err := rundir.ReadMeta(dir)
	if err != nil {
		return nil, meta, err
	}
	measured := map[string]bool{}
	for _, ph := range meta.Phases {
		measured[ph.Name] = ph.Measured
	}
	var recs []client.Record
	if _, err := rundir.ReadJSONL(filepath.Join(dir, rundir.RequestsFile), func(r *client.Record) error {
		if len(meta.Phases) == 0 || measured[r.Phase] {
			recs = append(recs, *r)
		}
		return nil
	}); err != nil {
		return nil, meta, err
	}
	recs, _ = rundir.DedupeRecords(recs)
	return recs, meta, nil
}

// Explain puts res beside the run whose records are run (nil: the result
// alone; runLoad its fingerprint, nil when unknown) and splits each
// difference.
func Explain(res Result, runDir string, run []client.Record, runLoad *sentload.Fingerprint) Explanation {
	ex := Explanation{Result: res, Run: runDir, ToolLoad: LoadOf(res)}
	if ex.ToolLoad != nil && runLoad != nil {
		v := sentload.Same(*runLoad, *ex.ToolLoad)
		ex.Load = &v
	}
	var peerRecs []client.Record
	if res.Requests != nil {
		peerRecs = peerRecords(res.Requests)
	} else {
		ex.Notes = append(ex.Notes, res.Label+"'s file keeps no per-request data: only the total difference is known (vLLM: --save-detailed; SGLang: --output-details; AIPerf: profile_export.jsonl)")
	}
	var side runSide
	if run != nil {
		side = runSide{run: run,
			started: runAsPeer(run, res.Defs, true, false, false),
			asPeer:  runAsPeer(run, res.Defs, true, true, false),
			spread:  runAsPeer(run, res.Defs, true, true, true)}
	}
	for _, metric := range Metrics {
		for _, stat := range Stats {
			ex.Lines = append(ex.Lines, explainOne(res, metric, stat, peerRecs, side))
		}
	}
	return ex
}

// runSide is the run's records as llmbench reads them, then read from the
// tool's start, then also to the tool's end, then also with each chunk's
// tokens spread evenly: each step one definitional part.
type runSide struct{ run, started, asPeer, spread []client.Record }

func explainOne(res Result, metric, stat string, peerRecs []client.Record, side runSide) Line {
	run := side.run
	l := Line{Metric: metric, Stat: stat}
	rep, hasRep := res.Reported[metric][stat]
	var v1, v3, v4 *float64
	if res.Requests != nil {
		vals := peerValues(res, metric)
		v1 = ptr(statOf(stat, vals, res.Defs.quantile))
		v3 = ptr(statOf(stat, vals, llmbenchQuantile))
		v4 = ptr(statOf(stat, llmbenchValues(peerRecs, metric), llmbenchQuantile))
	}
	switch {
	case hasRep:
		l.Tool = &rep
	case v1 != nil:
		l.Tool = v1
	}
	l.ToolUnderLlmbench = v4
	if run == nil {
		return l
	}
	r0 := ptr(statOf(stat, llmbenchValues(run, metric), llmbenchQuantile))
	l.Run = r0
	if l.Tool == nil || r0 == nil {
		return l
	}
	l.Total = ptrOf(*l.Tool - *r0)
	if v1 == nil || v3 == nil || v4 == nil {
		return l
	}
	rs := ptr(statOf(stat, llmbenchValues(side.started, metric), llmbenchQuantile))
	r1 := ptr(statOf(stat, llmbenchValues(side.asPeer, metric), llmbenchQuantile))
	if r1 == nil || rs == nil {
		return l
	}
	l.Parts = []Part{
		{PartOwnData, *l.Tool - *v1, "what the tool reported against the same statistic of its own per-request lists, under its definitions (0 when it reports none)"},
		{PartQuantile, *v1 - *v3, "its quantile estimator (" + res.Defs.Quantile + ") against llmbench's (linear between order statistics, rank p·n)"},
		{PartMetric, *v3 - *v4, metricSays(res.Defs, metric)},
		{PartStart, *rs - *r0, startSays(res.Defs)},
		{PartEnd, *r1 - *rs, endSays(res.Defs)},
	}
	last := *r1
	if metric == "itl" && hasGaps(res.Requests) {
		if r2 := ptr(statOf(stat, llmbenchValues(side.spread, metric), llmbenchQuantile)); r2 != nil {
			l.Parts = append(l.Parts, Part{PartPerChunk, *r2 - *r1, "the file keeps each chunk's time but not its tokens: llmbench's run read as if its tokens were spread evenly over the chunks, as the tool's file must be"})
			last = *r2
		}
	}
	var def float64
	for _, p := range l.Parts {
		def += p.Seconds
	}
	l.Definitional = &def
	l.Measurement = ptrOf(*v4 - last)
	return l
}

func metricSays(d Defs, metric string) string {
	switch metric {
	case "itl":
		return "the tool's ITL is " + d.ITL + "; llmbench's is per token: a chunk of k tokens a gap g after the last counts k gaps of g/k"
	case "tpot":
		if d.TPOT == "" {
			return "the tool reports no TPOT"
		}
		return "the tool's TPOT is " + d.TPOT + "; llmbench's is (E2E − TTFT) ÷ (output tokens − 1)"
	}
	return "the same definition on both sides"
}

func startSays(d Defs) string {
	if d.StartsBeforeSend {
		return "llmbench starts a request's clock at its last byte written, the tool before it hands the request to its HTTP client (connection wait, dial and write included): the run's records read from the hand-over"
	}
	return "both start at the send"
}

func endSays(d Defs) string {
	if d.EndsAtLastChunk {
		return "the tool's E2E ends at the last output chunk, llmbench's at the end of the stream: the run's records read to their last chunk"
	}
	return "both end at the end of the stream"
}

func hasGaps(reqs []Request) bool {
	return slices.ContainsFunc(reqs, func(r Request) bool { return len(r.Gaps) > 0 })
}

// peerValues are a metric's per-request values under the tool's own
// definitions, over the requests it counts.
func peerValues(res Result, metric string) []float64 {
	var out []float64
	for i := range res.Requests {
		r := &res.Requests[i]
		if !r.OK {
			continue
		}
		switch metric {
		case "ttft":
			out = append(out, r.TTFT)
		case "e2e":
			out = append(out, r.Latency)
		case "itl":
			if res.Defs.itl != nil {
				out = append(out, res.Defs.itl(r)...)
			}
		case "tpot":
			if res.Defs.tpot != nil {
				out = append(out, res.Defs.tpot(r)...)
			}
		}
	}
	return out
}

// llmbenchValues are a metric's values under llmbench's definitions
// (client.Record's), in seconds, over the successful records.
func llmbenchValues(recs []client.Record, metric string) []float64 {
	var out []float64
	var itls []time.Duration
	for i := range recs {
		r := &recs[i]
		if !r.OK() || r.Pooling() {
			continue
		}
		switch metric {
		case "ttft":
			if d, ok := r.TTFT(); ok {
				out = append(out, d.Seconds())
			}
		case "tpot":
			if d, ok := r.TPOT(); ok {
				out = append(out, d.Seconds())
			}
		case "e2e":
			out = append(out, r.E2E().Seconds())
		case "itl":
			itls = r.ITLs(itls[:0])
			for _, d := range itls {
				out = append(out, d.Seconds())
			}
		}
	}
	return out
}

// peerOrigin is where a peer's request is put on a record's clock: a zero
// offset means "did not happen" there.
const peerOrigin = time.Second

func dur(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// peerRecords turns a peer's requests into llmbench records, so that
// client.Record's own methods compute llmbench's metrics from them; a
// chunk's tokens are spread as a stream with only a final usage is.
func peerRecords(reqs []Request) []client.Record {
	out := make([]client.Record, 0, len(reqs))
	for i := range reqs {
		r := &reqs[i]
		rec := client.Record{Index: i, Sent: peerOrigin, End: peerOrigin + dur(r.Latency), OutputTokens: r.OutputLen, PromptTokens: r.PromptLen}
		if !r.OK {
			rec.ErrorClass = client.ErrStreamBroken
		}
		if r.TTFT > 0 {
			rec.FirstToken = peerOrigin + dur(r.TTFT)
		}
		if r.Gaps != nil && rec.FirstToken > 0 {
			at := r.TTFT
			rec.Chunks = append(rec.Chunks, client.Chunk{At: rec.FirstToken})
			for _, g := range r.Gaps {
				at += g
				rec.Chunks = append(rec.Chunks, client.Chunk{At: peerOrigin + dur(at)})
			}
			rec.TokensPerChunkSource = client.ChunkTokensUsageTotal
			client.SpreadTokens(rec.Chunks, r.OutputLen)
		}
		out = append(out, rec)
	}
	return out
}

// runAsPeer is the run's records read at the tool's instants: from the
// hand-over rather than the last byte written, to the last output chunk
// rather than the end of the stream; with spread, each chunk's tokens
// forgotten and spread evenly, as the tool's file must be read.
func runAsPeer(run []client.Record, d Defs, start, end, spread bool) []client.Record {
	out := make([]client.Record, len(run))
	for i := range run {
		r := run[i]
		if start && d.StartsBeforeSend {
			r.Wrote = 0
		}
		if end && d.EndsAtLastChunk && len(r.Chunks) > 0 {
			r.End = r.Chunks[len(r.Chunks)-1].At
		}
		if spread && len(r.Chunks) > 0 && r.Choices <= 1 {
			r.Chunks = slices.Clone(r.Chunks)
			client.SpreadTokens(r.Chunks, r.OutputTokens)
		}
		out[i] = r
	}
	return out
}

func ptr(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}

func ptrOf(v float64) *float64 { return &v }
