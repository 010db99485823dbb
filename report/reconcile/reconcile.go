// Package reconcile puts the engine's account of a run beside the client's and
// explains every gap between them as findings: request and token
// conservation, foreign traffic, where TTFT goes, per-token latency agreement,
// concurrency by Little's law, gauge staleness, dead scrape targets, KV
// pressure and histogram bucket limits. An engine without histograms or a
// request counter (llama.cpp) is read through its counters: foreign traffic
// from its generated tokens, TTFT split by its prefill time, per-token
// latency from its decode time. It also joins engine trace events to
// client records into per-request phase waterfalls.
//
// Everything here is a pure function of plain values (client records, scrape
// rows, trace events): no I/O, no clock. The thresholds behind each severity
// are documented next to the check and in docs/decisions/0600-reconcile-findings.md.
package reconcile

import (
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/scrape/trace"
)

// Severity grades a finding.
//   - info: an explanation; nothing is wrong with the run or its numbers.
//   - warn: the two views disagree beyond what the engine's documented
//     semantics explain, or a number in the report would mislead if read
//     naively (contaminated, unknowable, or stale).
//   - fail: a view is missing: the server's side of a comparison could not be
//     observed at all.
type Severity string

const (
	Info Severity = "info"
	Warn Severity = "warn"
	Fail Severity = "fail"
)

// rank orders severities for "the worst of".
func (s Severity) rank() int {
	switch s {
	case Fail:
		return 2
	case Warn:
		return 1
	}
	return 0
}

// Finding is one conclusion of comparing the client's and the server's views.
// Evidence holds the numbers behind the verdict, each key naming its unit
// (_s seconds, _ratio a fraction); non-finite values are never stored.
type Finding struct {
	ID       string             `json:"id"`
	Severity Severity           `json:"severity"`
	Verdict  string             `json:"verdict"` // one line a user understands
	Evidence map[string]float64 `json:"evidence,omitempty"`
}

// Finding IDs, in the order Reconcile reports them.
const (
	IDScrapeDead          = "scrape_dead"
	IDScrapeFailures      = "scrape_failures"
	IDScrapeUnrecognised  = "scrape_unrecognised"
	IDScrapeHealth        = "scrape_health"
	IDEngineChange        = "engine_change"
	IDCounterReset        = "counter_reset"
	IDInvalidValues       = "invalid_values"
	IDServerView          = "server_view"
	IDRequestConservation = "request_conservation"
	IDForeignTraffic      = "foreign_traffic"
	IDTokenConservation   = "token_conservation"
	IDTTFTDecomposition   = "ttft_decomposition"
	IDPerTokenLatency     = "per_token_latency"
	IDConcurrency         = "concurrency"
	IDGaugeStaleness      = "gauge_staleness"
	IDKVPressure          = "kv_pressure"
	IDBucketCeilings      = "bucket_ceilings"
	// IDConnections (connections.go) follows bucket_ceilings.
	IDTraceJoin = "trace_join"
)

// Window is one phase of the run on the run clock, with the /metrics
// snapshots taken just before its first request (Before) and just after its
// last one settled (After). Only measured windows are reconciled.
type Window struct {
	Name          string
	Measured      bool
	Start, End    time.Duration
	Before, After *scrape.Row
	// Settle says how waiting for the engine to count the window's requests
	// before After ended (nil when not recorded).
	Settle *scrape.Settled
}

// Input is everything a reconciliation reads.
type Input struct {
	Records []client.Record // the client's records, all phases
	// Chunks and Digest are what the records' chunks were digested into
	// (report.ReadRequests drops the chunks): Chunks[i] is Records[i]'s,
	// and Digest was made with the windows' Spans. Both nil: the records
	// still have their chunks and are digested here.
	Chunks  []chunkdigest.Request
	Digest  *chunkdigest.Digest
	Windows []Window      // the run's phases with their boundary snapshots
	Rows    []scrape.Row  // every scrape of the run, in order (gauges, staleness, dead targets)
	Dialect string        // the engine's metrics dialect ("" = the snapshots' own)
	Traces  []trace.Event // engine trace events (FastDeploy trace_logger.log, the built-in engine's), if any
	// InFlight is how many requests were still in flight when the records
	// were gathered (the live view's; 0 after a run): an engine that counts
	// tokens as it works has counted part of theirs in the last window.
	InFlight int
	// Origin is the wall-clock time of the run clock's zero (RunMeta.StartedAt):
	// trace events carry wall-clock times, records run-clock offsets. Zero =
	// estimated from the scrape rows' Wall − At.
	Origin time.Time
}

// Spans are the stretches of the run clock whose records the reconciliation
// compares with the engine: each measured window whose boundary snapshots
// can be differenced, from its first snapshot to the end of its last.
func Spans(windows []Window) []chunkdigest.Span {
	var out []chunkdigest.Span
	for _, w := range windows {
		if w.Measured && usable(w.Before) && usable(w.After) && w.Before.Target == w.After.Target {
			out = append(out, chunkdigest.Span{From: w.Before.At, To: w.After.At + w.After.Duration})
		}
	}
	return out
}

// digested fills in Chunks and Digest from the records' chunks when they
// are not given.
func (in *Input) digested() {
	if in.Digest != nil && len(in.Chunks) == len(in.Records) {
		return
	}
	in.Digest = chunkdigest.New(Spans(in.Windows))
	in.Chunks = make([]chunkdigest.Request, len(in.Records))
	for i := range in.Records {
		in.Chunks[i] = in.Digest.Add(&in.Records[i])
	}
}

// Reconcile compares the two views of a run and returns its findings in a
// fixed order (see the ID constants): scrape health first, then the checks
// that need both views, then the waterfall join. It is pure and deterministic.
func Reconcile(in Input) []Finding {
	a := analyse(in)
	var out []Finding
	out = append(out, a.scrapeHealth()...)
	if f, ok := a.engineChange(); ok {
		out = append(out, f)
	}
	if f, ok := a.counterResets(); ok {
		out = append(out, f)
	}
	if f, ok := a.invalidValues(); ok {
		out = append(out, f)
	}
	if a.paired() {
		out = append(out, a.pairedFindings()...)
	} else {
		out = append(out, a.noServerView())
	}
	if f, ok := a.gaugeStaleness(); ok {
		out = append(out, f)
	}
	if f, ok := a.kvPressure(); ok {
		out = append(out, f)
	}
	if a.paired() {
		if f, ok := a.bucketCeilings(); ok {
			out = append(out, f)
		}
	}
	if f, ok := connections(in.Records); ok {
		out = append(out, f)
	}
	if len(in.Traces) > 0 {
		out = append(out, traceJoinFinding(Waterfall(in.Records, in.Traces, a.origin)))
	}
	return out
}

// Worst is the most severe of the findings' severities (info for none).
func Worst(fs []Finding) Severity {
	w := Info
	for _, f := range fs {
		if f.Severity.rank() > w.rank() {
			w = f.Severity
		}
	}
	return w
}

// pairedFindings are the comparisons that need the engine's counters over a
// window: the same for the final reconciliation and the live one.
func (a *analysis) pairedFindings() []Finding {
	return []Finding{
		a.requestConservation(),
		a.foreignTraffic(),
		a.tokenConservation(),
		a.ttftDecomposition(),
		a.perTokenLatency(),
		a.concurrency(),
	}
}
