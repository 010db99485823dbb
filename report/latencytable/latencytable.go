// Package latencytable is the model of the latency table every report draws
// (the terminal's, report.md's and report.html's): which rows, which
// columns, and each cell's number in seconds, an engine quantile with the
// bounds of the bucket it lies in. report.LatencyTable builds it from a
// summary; each renderer only formats it, so the three cannot disagree on
// what the table holds (decision 0026).
package latencytable

import "math"

// Latency names a latency both sides can measure: its summary key (the
// scrape concept of the engine's histogram), its column name and what it is.
type Latency struct {
	Key, Name, Help string
}

// Latencies are the table's rows, in order: the latencies the client
// measures, each beside the engine's histogram of the same quantity.
var Latencies = []Latency{
	{"ttft", "TTFT", "time to first token: actual send → first chunk of output (content, reasoning or a tool-call delta)"},
	{"ttfc", "TTFC", "time to first content: actual send → first content chunk (after any reasoning or tool call)"},
	{"itl", "ITL", "inter-token latency: gaps between output chunks, each spread over the chunk's tokens"},
	{"tpot", "TPOT", "time per output token: (E2E − TTFT) / (tokens − 1), per request"},
	{"e2e", "E2E", "end to end: actual send → end of stream"},
}

// Name is the display name of a latency key ("ttft" → "TTFT"); a key
// only the engine has ("queue") is its own name.
func Name(key string) string {
	for _, l := range Latencies {
		if l.Key == key {
			return l.Name
		}
	}
	return key
}

// Table is a run's latency table. Every number is in seconds.
type Table struct {
	// Percentiles are each side's quantile columns, in percent (99.9).
	Percentiles []float64
	// Rows are the latencies both sides measure: TTFT, ITL, TPOT and E2E,
	// and TTFC when it differs from TTFT.
	Rows []Row
	// EngineOnly are the engine's histograms the client cannot see (queue,
	// prefill, decode, ...), by key; empty without a /metrics view.
	EngineOnly []Row
	// NoServer is true when the run has no /metrics view of the engine.
	NoServer bool
}

// Row is one latency, the client's measurement beside the engine's.
type Row struct {
	Latency
	Client Client // zero in an engine-only row
	Server Server
}

// Client is the client's distribution of a latency.
type Client struct {
	N    int     // samples; the mean and quantiles mean nothing without
	Mean float64 // seconds
	// MeanCI is the mean's 95 % interval (Student's t).
	MeanCI Interval
	// Quantiles are the Percentiles, one each.
	Quantiles []Value
	// Sketched: the intervals were read from a sketch of the samples
	// (the ITL's), each widened by the sketch's relative error.
	Sketched bool
}

// Value is a client quantile; OK is false where the summary has none (a
// summary written before its percentiles were configurable).
type Value struct {
	V  float64
	OK bool
	// CI is its 95 % interval from the order statistics.
	CI Interval
}

// Interval is a 95 % confidence interval in seconds: a side the sample
// cannot bound is infinite. Known is false where the summary has none (one
// written before intervals existed).
type Interval struct {
	Lo, Hi float64
	Known  bool
}

// TooFew reports whether the interval is known and open on a side: the
// sample is too small for the quantile's rank (a p99 from fewer than 368
// samples has no 95 % upper bound). Every report marks such a figure.
func (i Interval) TooFew() bool {
	return i.Known && (math.IsInf(i.Lo, 0) || math.IsInf(i.Hi, 0))
}

// Range is the interval as "398.0–431.0" with each bound formatted by f, an
// open side as "∞" ("398.0–∞", "−∞–431.0"); "" when not known.
func (i Interval) Range(f func(sec float64) string) string {
	if !i.Known {
		return ""
	}
	lo, hi := "−∞", "∞"
	if !math.IsInf(i.Lo, 0) {
		lo = f(i.Lo)
	}
	if !math.IsInf(i.Hi, 0) {
		hi = f(i.Hi)
	}
	return lo + "–" + hi
}

// TooFewMark marks a figure whose sample is too small for its rank, in
// every report; TooFewLegend explains it where the mark appears.
const (
	TooFewMark   = "†"
	TooFewLegend = "† too few samples for this percentile's rank: its 95 % interval is open on a side (∞), e.g. a p99 needs 368 samples for an upper bound"
	// IntervalLegend says what the bracketed client figures are.
	IntervalLegend = "client figures: value (95 % confidence interval: order statistics for a percentile, Student's t for a mean)"
	// SketchLegend says how ITL's intervals were read.
	SketchLegend = "ITL's intervals are read from a log-linear sketch of every gap, widened by its 0.39 % resolution; gaps of one request are not independent draws, so the interval may be narrower than ITL's variation between requests warrants"
)

// ServerState is why the engine's side of a row is empty ("" when it is not).
type ServerState string

const (
	Measured  ServerState = ""
	NoMetrics ServerState = "no /metrics"      // the run has no /metrics view
	Absent    ServerState = "absent"           // the engine has no histogram of it (or saw no observations)
	NotKept   ServerState = "no engine metric" // no engine keeps it (TTFC)
)

// Server is the engine's histogram of a latency.
type Server struct {
	State ServerState
	N     float64 // observations
	Mean  float64 // exact: the histogram's sum ÷ count
	// Quantiles are the Percentiles, one each: interpolated inside the
	// histogram's buckets.
	Quantiles []Bucket
}

// Bucket is an engine quantile: the bucket it lies in, [Low, High], and the
// value interpolated inside it. Above the top finite bucket only Low (the
// top bound) is known. OK is false where the summary has no such quantile.
type Bucket struct {
	Value     float64
	Low, High float64
	AboveTop  bool
	OK        bool
}
