// Package report turns a run directory into understanding: Load reads it
// through package rundir, Summary computes what it measured, and the
// renderers print that as text, Markdown, JSON and CSV. It runs no load and
// opens no file of its own; the live view is package live.
package report

import (
	"fmt"
	"time"

	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/report/sentload"
	"github.com/llmbench-org/llmbench/report/validity"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// SummarySchema names the version of summary.json's layout; docs/summary-schema.md documents it.
const SummarySchema = "llmbench.summary/v1"

// Summary is the result of a run: a plain JSON-tagged value every renderer
// reads. Every number carries its unit in its name or its parent's; every
// server-side quantile carries the bucket bounds that limit it.
type Summary struct {
	Schema string `json:"schema"`
	// Percentiles are the latency quantiles the tables show, in percent;
	// each Dist and ServerDist has them in Quantiles.
	Percentiles []float64         `json:"percentiles"`
	Run         RunInfo           `json:"run"`
	Engine      rundir.EngineMeta `json:"engine"`
	Health      Health            `json:"health"`
	Client      ClientSide        `json:"client"`
	Server      *ServerSide       `json:"server,omitempty"` // nil when the engine exposes no /metrics
	GPU         *GPUResult        `json:"gpu,omitempty"`    // the GPU telemetry over the measured phases (energy.go)
	Phases      []PhaseResult     `json:"phases"`
	Sweep       *SweepResult      `json:"sweep,omitempty"`  // with two or more measured phases
	Search      *SearchResult     `json:"search,omitempty"` // a capacity search's probes and answer
	// Outages are when the engine could not be reached, and the figures
	// outside them (absent when the run met none).
	Outages *Outages `json:"outages,omitempty"`
	// Timeline joins the engine's request spans (OTLP) to the records.
	Timeline *ServerTimeline `json:"server_timeline,omitempty"`
	// Waterfall joins client requests to the engine's trace log (when the run
	// has one): where each request's time went, phase by phase.
	Waterfall *reconcile.WaterfallSummary `json:"waterfall,omitempty"`
	Findings  []Finding                   `json:"findings"`
	// Gates are the verdicts of the run's gates (the scenario's thresholds,
	// the run's --threshold and --baseline), when it has any: the reports
	// show why a CI job failed.
	Gates *GateVerdicts `json:"gates,omitempty"`
	// Sessions is the prefix cache's hit rate session by session, when
	// the run's requests belong to sessions (an agentic replay).
	Sessions *Sessions `json:"sessions,omitempty"`
	// Load is a fingerprint of the load the measured phases sent (sentload.go).
	Load *sentload.Fingerprint `json:"load,omitempty"`
}

// GateVerdicts are the gates' results as the reports show them.
type GateVerdicts struct {
	Passed   bool   `json:"passed"`
	Baseline string `json:"baseline,omitempty"` // the baseline run's id
	Pass     int    `json:"pass"`
	Fail     int    `json:"fail"`
	// Inconclusive gates were measured but not decided by the evidence
	// (docs/decisions/0034).
	Inconclusive int           `json:"inconclusive"`
	Unevaluable  int           `json:"unevaluable"`
	Results      []GateVerdict `json:"results"`
}

// Counts says how the gates came out, in words: "3 passed, 1 failed, 2
// inconclusive, 0 could not be evaluated".
func (g *GateVerdicts) Counts() string {
	return fmt.Sprintf("%d passed, %d failed, %d inconclusive, %d could not be evaluated", g.Pass, g.Fail, g.Inconclusive, g.Unevaluable)
}

// GateVerdict is one gate: the expression, its status (pass, fail,
// inconclusive, error: could not be evaluated), the value observed and the limit, and the reason
// in words.
type GateVerdict struct {
	Gate     string   `json:"gate"`
	Status   string   `json:"status"`
	Metric   string   `json:"metric"`
	Unit     string   `json:"unit"`
	Observed float64  `json:"observed"`
	Limit    float64  `json:"limit"`
	Baseline *float64 `json:"baseline,omitempty"`
	Reason   string   `json:"reason"`
}

// RunInfo identifies the run.
type RunInfo struct {
	ID          string    `json:"id"`
	Scenario    string    `json:"scenario"`
	Description string    `json:"description,omitempty"` // the scenario's, for people
	Seed        int64     `json:"seed"`
	StartedAt   time.Time `json:"started_at"`
	Duration    float64   `json:"duration_s"` // measured phases, summed
	Version     string    `json:"version"`
	Stopped     string    `json:"stopped,omitempty"`
}

// Health says how far the run's own numbers can be trusted.
type Health struct {
	Valid    bool     `json:"valid"`
	Problems []string `json:"problems,omitempty"` // why not valid, in words: the invalid states' says
	// States are the named validity states (docs/decisions/0029): each
	// invalid one or a warning, with the figure that broke its bound and
	// which requests the latencies cover. Valid is "no invalid state".
	States          []validity.State `json:"states"`
	ScheduleLag     Dist             `json:"schedule_lag_s"`
	Connect         Dist             `json:"connect_s"`    // time to open new connections, kept out of TTFT
	SendDelay       Dist             `json:"send_delay_s"` // hand-over to the transport → request on the wire (connection wait, dial, write), kept out of TTFT
	Retries         int              `json:"retries"`
	DroppedArrivals int              `json:"dropped_arrivals"`
	LateArrivals    int              `json:"late_arrivals"`
	ScrapeOK        int              `json:"scrape_ok"`
	ScrapeFailures  int              `json:"scrape_failures"`
	PartialLines    int              `json:"partial_lines,omitempty"` // truncated JSONL lines skipped (a crash or a full disk mid-write)
	// DuplicateRecords counts records dropped because an earlier record
	// had the same request ID (the first is kept).
	DuplicateRecords int `json:"duplicate_records,omitempty"`
	// Records is how many distinct records requests.jsonl held, over
	// every phase (measured or not).
	Records int `json:"records"`
	// Unfinished: run.json has no end (RunMeta.Ended): llmbench was
	// stopped from outside before it finished the run.
	Unfinished bool `json:"unfinished,omitempty"`

	// StreamsWithoutDone counts successful streams that ended after their
	// finish_reason without `data: [DONE]` (client.Record.NoDone): a success,
	// but an engine that does not close its streams the OpenAI way.
	StreamsWithoutDone int `json:"streams_without_done"`
	// NotStreamed counts requests sent with stream:false
	// (client.Record.NoStream): only E2E and usage were measured.
	NotStreamed int `json:"not_streamed"`
	// ProtocolViolations counts the measured requests whose response broke
	// the protocol, per kind (client.Violation; a request counts once per
	// kind): absent when none did.
	ProtocolViolations map[string]int `json:"protocol_violations,omitempty"`
	// Wire counts the measured requests whose response travelled other than
	// as plain identity SSE ending with its body (client.Record.Wire), per
	// word: a content coding added on the way although identity was asked
	// ("gzip", "br", layers joined by "+"), or "linger" (the connection
	// stayed open after a complete stream): absent when none did.
	Wire   map[string]int      `json:"wire,omitempty"`
	Client rundir.ClientHealth `json:"client"`
}

// ClientSide is what the client measured over the measured phases.
type ClientSide struct {
	Requests   RequestCounts `json:"requests"`
	Tokens     TokenCounts   `json:"tokens"`
	Throughput Throughput    `json:"throughput"`
	Latency    Latencies     `json:"latency_s"`
	// Goodput is present when the scenario set an SLO.
	Goodput *Goodput `json:"goodput,omitempty"`
	// PeakConcurrency is the most requests in flight at once.
	PeakConcurrency int `json:"peak_concurrency"`
	// FirstTokenNotContent counts successful requests whose first output
	// chunk was reasoning or a tool call rather than content: their TTFC
	// (time to first content) differs from their TTFT.
	FirstTokenNotContent int `json:"first_token_not_content,omitempty"`
	// Unmeasured counts, per latency (ttft, ttfc, itl, tpot), the successful
	// requests that have no sample of it, by reason ("not streamed", "no
	// output chunk", "fewer than two chunks", ...): absent when every
	// successful request was measured.
	Unmeasured map[string]map[string]int `json:"unmeasured,omitempty"`
	// ServerTimings compares llama.cpp's own per-request timings with the
	// client's (absent when no record carries timings).
	ServerTimings *ServerTimings `json:"server_timings,omitempty"`
	// Endpoints are the figures per endpoint (endpoints.go), present when a
	// request went to an endpoint other than chat and completions, or the
	// requests went to more than one.
	Endpoints []EndpointSide `json:"endpoints,omitempty"`
}

// ServerTimings sets llama.cpp's per-request server-side timings
// (client.Record.Timings) beside the client's measurements of the same
// requests, in seconds.
type ServerTimings struct {
	Requests int `json:"requests"` // successful requests with timings
	// Prompt is the engine's prefill time (prompt_ms); TTFTMinusPrompt is
	// the client's TTFT minus it, per request with both: the time a first
	// token spent outside the engine's prefill (queueing, the network, the
	// client).
	Prompt          Dist `json:"prompt_s"`
	TTFTMinusPrompt Dist `json:"ttft_minus_prompt_s"`
	// PredictedPerToken is the engine's decode time per token
	// (predicted_per_token_ms, else predicted_ms ÷ predicted_n);
	// ClientPerToken is the client's (E2E − TTFT) ÷ (output − 1) over the
	// same requests (streamed, two or more tokens).
	PredictedPerToken Dist `json:"predicted_per_token_s"`
	ClientPerToken    Dist `json:"client_per_token_s"`
}

// RequestCounts counts requests by outcome.
type RequestCounts struct {
	Sent   int `json:"sent"`
	OK     int `json:"ok"`
	Failed int `json:"failed"` // sent − ok − canceled
	// Canceled counts the requests the run itself cancelled in flight (a
	// second Ctrl-C aborts them): not failures of the engine, so neither
	// in Failed, nor in Errors, nor in the error rate.
	Canceled int            `json:"canceled,omitempty"`
	Errors   map[string]int `json:"errors"` // failures by error class (never canceled)
	// FailedCI is the 95 % Wilson interval of the error rate, Failed ÷
	// (Sent − Canceled) (absent when no request counted).
	FailedCI *Bounds `json:"failed_fraction_ci,omitempty"`
	// ErrorSamples is the first error message of each class, so a reader
	// sees what went wrong without opening requests.jsonl.
	ErrorSamples map[string]string `json:"error_samples,omitempty"`
}

// TokenCounts sums tokens of successful requests. Source says where output
// counts came from: "usage", "chunks", or "mixed" (and how many of each).
type TokenCounts struct {
	Prompt   int            `json:"prompt"`
	Output   int            `json:"output"`
	Cached   int            `json:"cached"`
	Source   string         `json:"source"`
	BySource map[string]int `json:"by_source,omitempty"`
	// PromptTarget is what the dataset aimed for, summed over the same
	// requests: beside Prompt (the server's count) it shows how far the
	// prompt text missed the engine's tokenizer.
	PromptTarget int `json:"prompt_target"`
	// OutputTarget is the max_tokens asked for, summed.
	OutputTarget int `json:"output_target"`

	// Reasoning sums usage's reasoning tokens (part of Output); absent
	// when no request reported any.
	Reasoning int `json:"reasoning,omitempty"`
	// Chunks is the number of output chunks of the successful streamed
	// requests; ChunksPerToken is Chunks ÷ their output tokens: below 1
	// when chunks carry several tokens (speculative decoding, coalesced
	// deltas), and ITL is then per token, each chunk's gap spread over its
	// tokens. PerChunkSource says where the chunks' token counts came from
	// (client.ChunkTokenSource: usage_growth | usage_total | chunks, or
	// "mixed" with PerChunkBySource; "unrecorded" for records older than
	// the field).
	Chunks           int            `json:"chunks,omitempty"`
	ChunksPerToken   float64        `json:"chunks_per_token,omitempty"`
	PerChunkSource   string         `json:"per_chunk_source,omitempty"`
	PerChunkBySource map[string]int `json:"per_chunk_by_source,omitempty"`
	// OutputShort is present when successful requests stopped before their
	// max_tokens: the engine did not honour ignore_eos / min_tokens.
	OutputShort *OutputShort `json:"output_short,omitempty"`
	// ContextTruncated is present when successful requests stopped at the
	// engine's context (finish_reason length before max_tokens); they are
	// not in OutputShort.
	ContextTruncated *ContextTruncated `json:"context_truncated,omitempty"`
	// PromptError is the engine's prompt token count minus the plan's
	// target, per successful request that has both (absent without any).
	PromptError *PromptError `json:"prompt_error,omitempty"`
	// Images is what the requests' images cost (images.go); those
	// requests are not in PromptError. Absent without images.
	Images *ImageTokens `json:"images,omitempty"`
	// PromptCalibration is the run's note on how prompt lengths were
	// calibrated to the engine's tokenizer (RunMeta.PromptCalibration).
	PromptCalibration string `json:"prompt_calibration,omitempty"`
}

// OutputShort counts the successful requests whose output fell short of the
// max_tokens they asked for.
type OutputShort struct {
	Requests int `json:"requests"` // that stopped early
	Of       int `json:"of"`       // successful requests with a max_tokens
	// TokensShort is the sum of max_tokens − output over the short
	// requests; PlannedTokens the sum of max_tokens over all Of requests;
	// MissingFraction = TokensShort ÷ PlannedTokens.
	TokensShort     int     `json:"tokens_short"`
	PlannedTokens   int     `json:"planned_tokens"`
	MissingFraction float64 `json:"missing_fraction"`
	// MeanFraction is the mean over the short requests of output ÷
	// max_tokens: how much of its planned output a short request got.
	MeanFraction float64 `json:"mean_fraction"`
}

// PromptError is the distribution over requests of the engine-counted prompt
// tokens minus the plan's target (tokens; positive: the engine counted
// more), and of the same error relative to the target (fractions).
type PromptError struct {
	Requests int     `json:"requests"`
	Mean     float64 `json:"mean"`
	P50      float64 `json:"p50"`
	P99      float64 `json:"p99"`
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	// FractionMean, FractionP50, FractionP99: (prompt − target) ÷ target.
	FractionMean float64 `json:"fraction_mean"`
	FractionP50  float64 `json:"fraction_p50"`
	FractionP99  float64 `json:"fraction_p99"`
}

// Throughput over the measured duration.
type Throughput struct {
	RequestsPerSec     float64 `json:"requests_per_s"`
	OutputTokensPerSec float64 `json:"output_tokens_per_s"`
	TotalTokensPerSec  float64 `json:"total_tokens_per_s"`
	// PeakOutputTokensPerSec is the most output tokens streamed in one
	// second of the run clock.
	PeakOutputTokensPerSec float64 `json:"peak_output_tokens_per_s"`
}

// Latencies are the client's latency distributions, in seconds. TTFT counts
// to the first chunk of generated output (content, reasoning or a tool-call
// delta); TTFC to the first chunk of content proper, over the requests that
// had one: the two differ for reasoning models and tool calls.
type Latencies struct {
	TTFT Dist `json:"ttft"`
	TTFC Dist `json:"ttfc"`
	ITL  Dist `json:"itl"`
	TPOT Dist `json:"tpot"`
	E2E  Dist `json:"e2e"`
}

// Dist summarises samples (seconds). Quantiles interpolate linearly between
// order statistics (gonum stat.LinInterp).
type Dist struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stddev"` // sample standard deviation
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
	// Quantiles are the configured percentiles ("p99.9": seconds).
	Quantiles map[string]float64 `json:"quantiles,omitempty"`
	// CI are the 95 % confidence intervals of the mean and of every
	// quantile above, and which quantiles the sample is too small for
	// (absent without samples, and in summaries written before them).
	CI *DistCI `json:"ci,omitempty"`
}

// ServerSide is the engine's own account of the measured phases: deltas of its
// counters and histograms between the snapshots around each measured phase.
type ServerSide struct {
	Dialect  string                `json:"dialect"`
	Targets  []string              `json:"targets"`
	Latency  map[string]ServerDist `json:"latency_s"` // ttft, itl, tpot, e2e, queue, prefill, decode, inference: whatever the engine has
	Counters map[string]float64    `json:"counters"`  // deltas: prompt_tokens, generation_tokens, requests_finished, ...
	Gauges   map[string]GaugeStat  `json:"gauges"`    // over the scrapes inside the measured phases
	// Replicas keeps several targets apart: each one's counter deltas, so a
	// reader sees how the load spread (absent with a single target).
	Replicas map[string]map[string]float64 `json:"replicas,omitempty"`
	Notes    []string                      `json:"notes,omitempty"`
}

// ServerDist is a latency distribution derived from a histogram delta.
type ServerDist struct {
	N    float64        `json:"n"`
	Mean float64        `json:"mean"`
	P50  BucketEstimate `json:"p50"`
	P90  BucketEstimate `json:"p90"`
	P99  BucketEstimate `json:"p99"`
	// Quantiles are the configured percentiles, each a bucket estimate.
	Quantiles map[string]BucketEstimate `json:"quantiles,omitempty"`
	// CDF compares the client's samples of the same quantity with the
	// engine's histogram at the engine's own bucket bounds (the client's
	// samples re-binned), so both distributions are read at the same points;
	// CDFMaxGap is the largest difference between them.
	CDF       []scrape.CDFPoint `json:"cdf,omitempty"`
	CDFMaxGap float64           `json:"cdf_max_gap,omitempty"`
}

// BucketEstimate is a quantile interpolated inside a histogram bucket, with
// the bucket's bounds: the true value lies in [Bucket[0], Bucket[1]].
// AboveTop is true when it fell in the +Inf bucket: Value is then the top
// finite bound and the true value is unknowable above it.
type BucketEstimate struct {
	Value    float64    `json:"value"`
	Bucket   [2]float64 `json:"bucket"`
	AboveTop bool       `json:"above_top,omitempty"`
}

// GaugeStat summarises a gauge over the scrapes of the measured phases.
type GaugeStat struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
	Last float64 `json:"last"`
	// UpdateInterval is the mean time between scrapes that saw the value
	// change (0 when it never changed): a stale gauge shows a long interval.
	UpdateInterval float64 `json:"update_interval_s"`
}

// PhaseResult is one phase's client and server views.
type PhaseResult struct {
	Name     string      `json:"name"`
	Measured bool        `json:"measured"`
	Start    float64     `json:"start_s"`
	Duration float64     `json:"duration_s"`
	Load     float64     `json:"load,omitempty"`      // the offered load: requests/s (open loop) or users (closed loop)
	LoadUnit string      `json:"load_unit,omitempty"` // "requests/s" | "users"
	Planned  int         `json:"planned,omitempty"`   // requests the plan offered (rundir.PhaseMeta.Planned)
	Client   ClientSide  `json:"client"`
	Server   *ServerSide `json:"server,omitempty"`
	// SLOVerdict is the measured phase's verdict against the scenario's slo
	// and its target (what until: decided waits for; absent without an slo).
	SLOVerdict *SLOVerdict `json:"slo_verdict,omitempty"`
	// GPU and Cache: the GPU telemetry over the phase and the prefix cache
	// it started with (energy.go, cache.go).
	GPU   *GPUResult   `json:"gpu,omitempty"`
	Cache *CacheResult `json:"cache,omitempty"`
}

// SweepResult lines the measured phases up by offered load and says where
// the engine stopped scaling.
type SweepResult struct {
	Points     []SweepPoint `json:"points"`
	Saturation Saturation   `json:"saturation"`
	// GoodputPeak is the point with the most requests within the SLO: the
	// load to run at when users must be served within it (absent without
	// an slo).
	GoodputPeak *GoodputPeak `json:"goodput_peak,omitempty"`
}

// GoodputPeak is a sweep's best point by goodput.
type GoodputPeak struct {
	Phase        string  `json:"phase"`
	Load         float64 `json:"load"`
	LoadUnit     string  `json:"load_unit"`
	RequestsPerS float64 `json:"goodput_requests_per_s"`
}

// SweepPoint is one measured phase of a sweep.
type SweepPoint struct {
	Phase         string  `json:"phase"`
	Load          float64 `json:"load"`
	LoadUnit      string  `json:"load_unit"`
	RequestsPerS  float64 `json:"requests_per_s"`
	OutputTokPerS float64 `json:"output_tokens_per_s"`
	TTFTp50       float64 `json:"ttft_p50_s"`
	TTFTp99       float64 `json:"ttft_p99_s"`
	QueueMean     float64 `json:"server_queue_mean"` // mean requests_waiting over the phase's scrapes; -1 when the engine does not say
	// The client's ITL, TPOT and E2E quantiles over the phase (0 without
	// samples, like TTFT).
	ITLp50  float64 `json:"itl_p50_s"`
	ITLp99  float64 `json:"itl_p99_s"`
	TPOTp50 float64 `json:"tpot_p50_s"`
	TPOTp99 float64 `json:"tpot_p99_s"`
	E2Ep50  float64 `json:"e2e_p50_s"`
	E2Ep99  float64 `json:"e2e_p99_s"`
	// GPUUtilization, EnergyPerOutputTokenJ and Cache: the point's GPU
	// telemetry and prefix cache (energy.go), absent without them.
	GPUUtilization        *float64 `json:"gpu_utilization,omitempty"`
	EnergyPerOutputTokenJ *float64 `json:"energy_per_output_token_j,omitempty"`
	Cache                 string   `json:"cache,omitempty"`
	// OutputTokPerSPerUser is the output rate one request in flight saw:
	// the successful requests' output tokens ÷ the sum of their E2E, which
	// is output_tokens_per_s ÷ the mean number of them in flight (Little's
	// law); 0 without a successful request.
	OutputTokPerSPerUser float64 `json:"output_tokens_per_s_per_user"`
	// GoodputPerS is the rate of requests that met the scenario's SLO
	// (absent without one).
	GoodputPerS *float64 `json:"goodput_requests_per_s,omitempty"`
	// GoodFraction is the share of the point's counted requests that met
	// the SLO (Goodput.Fraction), with its 95 % Wilson interval (absent
	// without an slo).
	GoodFraction   *float64 `json:"good_fraction,omitempty"`
	GoodFractionCI *Bounds  `json:"good_fraction_ci,omitempty"`
	// N is the samples behind each latency's quantiles ("ttft", "itl",
	// "tpot", "e2e"); CI the 95 % interval of each quantile above, by its
	// field's name ("ttft_p99_s"); TooFew those whose sample is too small
	// for their rank (docs/decisions/0038).
	N      map[string]int    `json:"n,omitempty"`
	CI     map[string]Bounds `json:"ci,omitempty"`
	TooFew []string          `json:"too_few,omitempty"`
}

// Saturation is where throughput stopped following the load
// (saturation.Detect over the points).
type Saturation struct {
	Found    bool    `json:"found"`
	Phase    string  `json:"phase,omitempty"` // the knee: the last point still scaling
	Load     float64 `json:"load,omitempty"`
	Capacity float64 `json:"capacity_requests_per_s,omitempty"`
	Reason   string  `json:"reason"`
}

// Finding is one conclusion of comparing the client's and the server's
// views (report/reconcile explains every gap it finds).
type Finding = reconcile.Finding

// Quantile is the percentile p (in percent) of d: from Quantiles, or from the
// fixed fields of a summary written before Quantiles existed.
func (d Dist) Quantile(p float64) (float64, bool) {
	if v, ok := d.Quantiles[rundir.PercentileName(p)]; ok {
		return v, true
	}
	switch p {
	case 50:
		return d.P50, d.N > 0
	case 90:
		return d.P90, d.N > 0
	case 95:
		return d.P95, d.N > 0
	case 99:
		return d.P99, d.N > 0
	}
	return 0, false
}

// Quantile is the percentile p (in percent) of the engine's histogram.
func (d ServerDist) Quantile(p float64) (BucketEstimate, bool) {
	if v, ok := d.Quantiles[rundir.PercentileName(p)]; ok {
		return v, true
	}
	switch p {
	case 50:
		return d.P50, d.N > 0
	case 90:
		return d.P90, d.N > 0
	case 99:
		return d.P99, d.N > 0
	}
	return BucketEstimate{}, false
}
