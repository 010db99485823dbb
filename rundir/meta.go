// Package rundir owns a run directory (docs/decisions/0003, 0017): its file
// names and metadata, the one atomic writer every whole file goes through,
// the JSONL appends with their torn-line rule, the bounded readers, merging
// the shards of one run and dropping duplicate records. Nothing else opens a
// run directory's files; what leaves through it is redacted (package redact).
package rundir

import (
	"time"

	"strconv"

	"github.com/llmbench-org/llmbench/scrape"
)

// File names inside a run directory.
const (
	ScenarioFile  = "scenario.yaml"    // the resolved scenario
	RequestsFile  = "requests.jsonl"   // one client.Record per finished request, appended as it finishes
	ScrapesFile   = "scrapes.jsonl"    // one scrape.Row per scrape attempt
	RunFile       = "run.json"         // RunMeta: who ran what, phases and their boundary snapshots
	SummaryFile   = "summary.json"     // the Summary
	MarkdownFile  = "report.md"        // the Summary in Markdown, for CI comments
	TruthFile     = "truth.jsonl"      // the built-in engine's ground truth (kind sim only)
	TraceLogFile  = "trace_logger.log" // the built-in engine's FastDeploy trace log (fastdeploy dialect only)
	EngineLogFile = "engine.log"       // a launched engine's stdout and stderr (kind launch only)
	HTMLFile      = "report.html"      // the Summary and its charts, one self-contained page
)

// RunMeta describes a run: what was run against what, and the phases with the
// /metrics snapshots taken at their boundaries. It is written when the run starts
// and rewritten as phases end, so a crash leaves the phases finished so far.
type RunMeta struct {
	ID          string    `json:"id"`
	Scenario    string    `json:"scenario"`
	Description string    `json:"description,omitempty"` // the scenario's free text
	Seed        int64     `json:"seed"`
	StartedAt   time.Time `json:"started_at"` // wall clock of the run clock's origin
	Version     string    `json:"version"`
	// Shard of Shards: this run sent only its share of the plan (run
	// --shard); merged runs list the runs they came from in MergedFrom.
	Shard      int      `json:"shard,omitempty"`
	Shards     int      `json:"shards,omitempty"`
	MergedFrom []string `json:"merged_from,omitempty"`
	// Host is the machine's (pod's, container's) name: merge tells the
	// engines that shards on different machines reach at the same loopback
	// address apart by it.
	Host string `json:"host,omitempty"`
	// Thresholds and Baseline are the gates the run was given beside its
	// scenario's (--threshold, --baseline), so that a rebuilt report shows
	// the same verdicts.
	Thresholds []string `json:"thresholds,omitempty"`
	Baseline   string   `json:"baseline,omitempty"`

	Engine EngineMeta `json:"engine"`
	// SLO is the scenario's per-request objective, for goodput (nil: none).
	SLO    *SLO        `json:"slo,omitempty"`
	Phases []PhaseMeta `json:"phases"`
	// Search is a capacity search's plan and its probes (nil: none).
	Search *Search `json:"search,omitempty"`

	// Driver-side honesty: arrivals the driver could not send on time or at all.
	DroppedArrivals int `json:"dropped_arrivals"`
	LateArrivals    int `json:"late_arrivals"`

	// Stopped says why the run ended early ("" when it ran to plan), e.g. "interrupted".
	Stopped string `json:"stopped,omitempty"`
	// Ended is the wall-clock time the run wrote its end: set in the last
	// rewrite of run.json, after the driver returned and the records were
	// flushed, whether the run completed, was interrupted (Ctrl-C) or
	// stopped itself. Zero means the process died first (kill -9, a crash,
	// a lost machine): report.Build then marks the run not valid.
	Ended time.Time `json:"ended_at,omitzero"`

	Client ClientHealth `json:"client_health"`

	// PromptCalibration says how prompt lengths were calibrated to the
	// engine's tokenizer, in words ("" when they were not); the summary
	// copies it into client.tokens.prompt_calibration.
	PromptCalibration string `json:"prompt_calibration,omitempty"`
	// Percentiles are the latency quantiles the reports show (the
	// scenario's report.percentiles); empty: DefaultPercentiles.
	Percentiles []float64 `json:"percentiles,omitempty"`
	// MaxFailureRate is the scenario's report.validity.max_failure_rate (0:
	// a run.json from before it, judged by the report's default).
	MaxFailureRate float64 `json:"max_failure_rate,omitempty"`
	// IgnoreEOS is the scenario's workload.ignore_eos: whether the plan
	// asked for exact output lengths (nil: a run.json from before it,
	// read as asked, the default).
	IgnoreEOS *bool `json:"ignore_eos,omitempty"`
}

// EngineMeta says what engine was under test and where.
type EngineMeta struct {
	Kind       string `json:"kind"`
	Dialect    string `json:"dialect"`
	BaseURL    string `json:"base_url"`
	MetricsURL string `json:"metrics_url,omitempty"`
	Model      string `json:"model"`
	// ContextTokens is the context one request may fill (prompt + output),
	// as the engine stated it at the start (llama.cpp's per-slot n_ctx,
	// vLLM's max_model_len); 0 when unknown.
	ContextTokens int `json:"context_tokens,omitempty"`
	// Notes say what was found out rather than configured (a model read from
	// /v1/models, a metrics URL derived from the base URL, or why none).
	Notes []string `json:"notes,omitempty"`
}

// PhaseMeta is one phase of the run on the run clock, with the snapshots of
// /metrics taken just before its first request and just after its last one.
type PhaseMeta struct {
	Name     string        `json:"name"`
	Measured bool          `json:"measured"`
	Start    time.Duration `json:"start_ns"`
	End      time.Duration `json:"end_ns"`
	Load     float64       `json:"load,omitempty"`      // the offered load: requests/s (open loop) or users (closed loop)
	LoadUnit string        `json:"load_unit,omitempty"` // "requests/s" | "users"
	// Planned is how many requests the phase offered by its plan: its
	// request count, or for an open loop that ran to its end every arrival
	// (sent or dropped); 0 where the plan sets no number (users for a
	// time) or the phase was cut short.
	Planned int         `json:"planned,omitempty"`
	Before  *scrape.Row `json:"before,omitempty"`
	After   *scrape.Row `json:"after,omitempty"`
	// BeforeRows and AfterRows are the boundary scrapes of each target or
	// replica when there are several (Before and After are their sum).
	BeforeRows []scrape.Row `json:"before_rows,omitempty"`
	AfterRows  []scrape.Row `json:"after_rows,omitempty"`
	// Settle says how waiting for the engine to count the phase's requests
	// ended before After was taken (nil without /metrics).
	Settle *scrape.Settled `json:"settle,omitempty"`
	// Cache and GPUBefore/GPUAfter: the prefix cache the phase started
	// with, and the GPU telemetry's boundary scrapes (gpu.go).
	Cache     *PhaseCache  `json:"cache,omitempty"`
	GPUBefore []scrape.Row `json:"gpu_before,omitempty"`
	GPUAfter  []scrape.Row `json:"gpu_after,omitempty"`
}

// ClientHealth is what the load generator measured of itself, so a run can say
// when the client, not the engine, was the bottleneck.
type ClientHealth struct {
	CPUCores          int     `json:"cpu_cores"`           // GOMAXPROCS during the run
	CPUUtilization    float64 `json:"cpu_utilization"`     // process CPU time ÷ (wall time × cores), 0–1
	SchedLatencyP99_s float64 `json:"sched_latency_p99_s"` // Go scheduler: runnable → running, p99 over the run
	Saturated         bool    `json:"saturated"`           // the client itself was the bottleneck (CPU-bound)
	// Delay says what delayed the client's timestamps: "" nothing,
	// "cpu_bound" its own work, "host_delayed" other processes on the host,
	// "cpu_throttled" its container's CPU limit.
	Delay    string `json:"delay,omitempty"`
	GCCycles uint64 `json:"gc_cycles"`           // garbage collections in the client process during the run
	GCPolicy string `json:"gc_policy,omitempty"` // how the collector was kept out of the measurement
	// HostOtherCPU is the share of the machine (0–1, all its CPUs) that
	// other processes used during the run, the engine included when it ran
	// on the same host (the built-in one runs in a child process); absent
	// where it is not measured (off Linux).
	HostOtherCPU *float64 `json:"host_other_cpu,omitempty"`
	// The CPU limit of llmbench's cgroup (a container's, a pod's) in cores,
	// absent for none or where not measured, and how often and how long it
	// stopped the client during the run (Linux with a CPU controller).
	CPUQuota         *float64 `json:"cpu_quota,omitempty"`
	ThrottledPeriods int64    `json:"throttled_periods,omitempty"`
	Throttled_s      float64  `json:"throttled_s,omitempty"`
	// ImagesEncodedAtSend counts images past the budget of those encoded
	// ahead of the load: each one's encoding ran on the client's cores as
	// its request went out (decision 1503).
	ImagesEncodedAtSend int `json:"images_encoded_at_send,omitempty"`
}

// DefaultPercentiles are the quantiles reports show unless a run says otherwise.
var DefaultPercentiles = []float64{50, 90, 99}

// PercentileName is how a percentile is named: 99 → "p99", 99.9 → "p99.9".
func PercentileName(p float64) string { return "p" + strconv.FormatFloat(p, 'f', -1, 64) }
