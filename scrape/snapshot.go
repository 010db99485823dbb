// Package scrape polls an engine's Prometheus /metrics, parses the exposition
// with expfmt, maps the engine's dialect onto llmbench's canonical concepts, and
// computes counter and histogram deltas and quantiles between snapshots. It
// keeps fetch, parse, map and store apart, and never guesses what the client saw.
package scrape

import "time"

// Concept is a canonical server-side quantity every dialect maps onto
// (ARCHITECTURE.md, "Canonical concepts"). A concept an engine lacks is absent
// from a Snapshot, never zero.
type Concept string

// Gauges.
const (
	RequestsRunning Concept = "requests_running"
	RequestsWaiting Concept = "requests_waiting"
	KVCacheUsage    Concept = "kv_cache_usage"   // fraction 0–1
	PrefixCacheHit  Concept = "prefix_cache_hit" // fraction 0–1 (gauge form)
	GenThroughput   Concept = "gen_throughput"   // tokens/s, the engine's own average
	BatchSize       Concept = "batch_size"
)

// Counters.
const (
	PromptTokens     Concept = "prompt_tokens"
	GenerationTokens Concept = "generation_tokens"
	CachedTokens     Concept = "cached_tokens" // prefix-cache hit tokens (numerator of the hit ratio)
	PrefixQueries    Concept = "prefix_cache_queries"
	PrefixHits       Concept = "prefix_cache_hits"
	RequestsReceived Concept = "requests_received"
	RequestsFinished Concept = "requests_finished"
	RequestsAborted  Concept = "requests_aborted"
	Preemptions      Concept = "preemptions"
	// DecodeSeconds and PrefillSeconds are the engine's own time spent
	// generating and prefilling, summed over requests, in seconds: counters
	// of cumulative time, for an engine that keeps no latency histograms
	// (llama.cpp's tokens_predicted_seconds_total and prompt_seconds_total).
	// ΔDecodeSeconds / ΔGenerationTokens is the engine's time per generated
	// token; ΔPrefillSeconds over the requests prefilled, its prefill time
	// per request.
	DecodeSeconds  Concept = "decode_seconds"
	PrefillSeconds Concept = "prefill_seconds"
)

// Histograms (seconds).
const (
	TTFT      Concept = "ttft"
	ITL       Concept = "itl"
	TPOT      Concept = "tpot"
	E2E       Concept = "e2e"
	Queue     Concept = "queue"
	Prefill   Concept = "prefill"
	Decode    Concept = "decode"
	Inference Concept = "inference"
)

// Histogram is a cumulative Prometheus histogram, summed over the label sets
// a dialect aggregates. Bounds are the finite upper bounds (le) in increasing
// order; Cumulative[i] counts observations <= Bounds[i]; Count includes +Inf.
type Histogram struct {
	Bounds     []float64 `json:"bounds"`
	Cumulative []float64 `json:"cumulative"`
	Count      float64   `json:"count"`
	Sum        float64   `json:"sum"`
}

// Snapshot is one scrape mapped onto canonical concepts.
type Snapshot struct {
	Dialect    string                `json:"dialect"`
	Gauges     map[Concept]float64   `json:"gauges,omitempty"`
	Counters   map[Concept]float64   `json:"counters,omitempty"`
	Histograms map[Concept]Histogram `json:"histograms,omitempty"`

	// Resets lists the counters and histograms that went backwards between
	// the two snapshots of a Delta (the engine restarted, or a replica
	// vanished): their delta is the later value alone, so it covers only the
	// time since the reset (Increase keeps what came before it too). Set by
	// Delta and Increase only; sorted.
	Resets []Concept `json:"resets,omitempty"`

	// Invalid holds the concepts the engine exposed but whose value cannot
	// be used, each with the reason (a NaN or infinite series, a negative
	// counter, a histogram whose count is below its buckets): they are
	// absent from Gauges, Counters and Histograms, and stay absent in every
	// Sum and Delta they enter, rather than dropping out of a total that is
	// then shown as whole.
	Invalid map[Concept]string `json:"invalid,omitempty"`

	// Series holds, for a counter summed over several series (dp ranks,
	// finished reasons, replicas of a Sum), each series' value keyed by its
	// labels, so that Delta and Increase find a reset per series (one dp
	// rank restarting while the others count on) and count only that series
	// from 0. Absent for a counter with a single series.
	Series map[Concept]map[string]float64 `json:"series,omitempty"`

	// GPUs holds each GPU of a GPU telemetry exposition (dialect dcgm) on
	// its own, with its labels; absent from an engine's snapshot. Sum and
	// Delta leave it out: the GPU concepts above carry the totals.
	GPUs []GPUReading `json:"gpus,omitempty"`
}

// invalidate makes c absent with a reason.
func (s *Snapshot) invalidate(c Concept, reason string) {
	delete(s.Gauges, c)
	delete(s.Counters, c)
	delete(s.Histograms, c)
	delete(s.Series, c)
	if s.Invalid == nil {
		s.Invalid = map[Concept]string{}
	}
	if _, ok := s.Invalid[c]; !ok {
		s.Invalid[c] = reason
	}
}

// Row is one scrape attempt as it is stored in scrapes.jsonl: health is data,
// so a failed scrape is a row with OK false and its error.
type Row struct {
	Target   string        `json:"target"`
	Wall     time.Time     `json:"wall"`   // wall-clock time of the scrape (to line up with the engine's own logs)
	At       time.Duration `json:"at_ns"`  // start of the scrape on the run clock
	Duration time.Duration `json:"dur_ns"` // how long the fetch and parse took
	OK       bool          `json:"ok"`
	Error    string        `json:"error,omitempty"`
	Bytes    int           `json:"bytes,omitempty"`
	Snapshot *Snapshot     `json:"snapshot,omitempty"`

	Status int    `json:"status,omitempty"` // HTTP status, 0 when no response arrived
	Format string `json:"format,omitempty"` // exposition format that was parsed: text, openmetrics or protobuf
}
