// Package scenarios is the YAML file format of llmbench: types, defaults, and
// strict validation whose errors name file:line and the field. The example
// scenarios live beside it and are embedded, so every example is tested.
// It starts nothing. The reference for users is scenarios/README.md.
package scenarios

import (
	"time"

	"github.com/llmbench-org/llmbench/endpoints"
)

// Scenario is one validated scenario file with defaults filled.
// Parse, Load and LoadFS are the only ways to get a valid one.
type Scenario struct {
	// Name identifies the scenario in run directories and request ids:
	// letters, digits, '.', '_' and '-', at most 64. Required.
	Name string `yaml:"name"`
	// Description is free text for people.
	Description string `yaml:"description,omitempty"`
	// Seed drives every random choice of the plan (arrivals, lengths, text).
	// Same scenario and seed, same plan. Default 1.
	Seed int64 `yaml:"seed"`
	// Model is the model name put in requests. "" means the engine's: the
	// built-in engine's default name, or the one model an external engine's
	// /v1/models lists.
	Model    string   `yaml:"model,omitempty"`
	Engine   Engine   `yaml:"engine"`
	Workload Workload `yaml:"workload"`
	Scrape   Scrape   `yaml:"scrape"`
	// Request shapes every request: the endpoint, streaming, and what is
	// added to each body and header set. Optional.
	Request Request `yaml:"request,omitempty"`
	// SLO is the per-request objective goodput counts against. Optional.
	SLO *SLO `yaml:"slo,omitempty"`
	// Gates are pass/fail thresholds for CI. Their syntax belongs to the gates
	// package; a scenario only carries them.
	Gates *Gates `yaml:"gates,omitempty"`
	// Report shapes the reports. Optional.
	Report *ReportSettings `yaml:"report,omitempty"`

	raw map[string]string // scalar text before ${VAR} substitution, by field path
	src source            // where the file came from, to read the data files it names
}

// ReportSettings shape what the reports show.
type ReportSettings struct {
	// Percentiles are the latency quantiles every report shows, in percent
	// (default 50, 90, 99), e.g. [50, 90, 95, 99, 99.9]; gates may name any
	// of them (client.ttft.p99.9).
	Percentiles []float64 `yaml:"percentiles,omitempty"`
	// Validity bounds what a run may show and still be called valid
	// (docs/decisions/0029). Defaults filled.
	Validity Validity `yaml:"validity"`
}

// Validity bounds the states that make a run not valid.
type Validity struct {
	// MaxFailureRate is the share of requests (failed ÷ sent, requests
	// the run canceled itself left out) above which the run is not valid:
	// default 1 %. A scenario that provokes failures on purpose (the
	// built-in engine's faults) declares what it expects here, with room
	// for chance; failures within it are a warning.
	MaxFailureRate float64 `yaml:"max_failure_rate"`
}

// DefaultMaxFailureRate is report.validity.max_failure_rate's default; the
// report's own (validity.DefaultMaxFailureRate) is the same number for runs
// whose run.json predates the field.
const DefaultMaxFailureRate = 0.01

// DefaultPercentiles are the quantiles reports show without report.percentiles.
var DefaultPercentiles = []float64{50, 90, 99}

// Percentiles are the quantiles the reports show.
func (s Scenario) Percentiles() []float64 {
	if s.Report == nil || len(s.Report.Percentiles) == 0 {
		return DefaultPercentiles
	}
	return s.Report.Percentiles
}

// The built-in request endpoints (Request.Endpoint); any endpoint
// registered with package endpoints is accepted.
const (
	EndpointChat        = endpoints.Chat        // /v1/chat/completions (the default)
	EndpointCompletions = endpoints.Completions // /v1/completions: the messages' text as one prompt, no chat template
	EndpointMessages    = endpoints.Messages    // /v1/messages: Anthropic's Messages API
)

// Request shapes every request sent.
type Request struct {
	// Endpoint is chat ("" = chat) or completions.
	Endpoint string `yaml:"endpoint,omitempty"`
	// Stream: true (default) streams the answer; false sends non-streamed
	// requests, of which only E2E and usage are measured (no TTFT, ITL or
	// TPOT, and the reports say so).
	Stream *bool `yaml:"stream,omitempty"`
	// ExtraBody is merged into every request's JSON body: sampling parameters
	// (temperature, top_p, seed), logprobs, a LoRA adapter as the model,
	// vendor fields. Fields llmbench sets itself for the plan (max_tokens,
	// min_tokens, ignore_eos, the request id, stream) are the plan's: naming
	// them here is an error; use workload.ignore_eos and
	// workload.output_tokens.
	ExtraBody map[string]any `yaml:"extra_body,omitempty"`
	// Headers are sent with every request (e.g. a routing key); ${VAR}
	// values are expanded and never written back into reports.
	Headers map[string]string `yaml:"headers,omitempty"`
	// Inputs is how many texts a request of a pooling endpoint carries
	// (embeddings' inputs, rerank's documents beside the query), each of
	// workload.prompt_tokens (the query too); default 1. Only for those.
	Inputs int `yaml:"inputs,omitempty"`
	// Calibrate: true (default) asks the engine, before the measured phase,
	// how many tokens its chat template adds (its tokenize endpoints, or a
	// few one-token probe requests) and fits the synthetic prompts so that
	// the engine counts the planned prompt_tokens; false sends them as
	// planned, and the summary reports how far the engine's count is off.
	Calibrate *bool `yaml:"calibrate,omitempty"`
}

// Streamed reports whether requests stream (the default).
func (r Request) Streamed() bool { return r.Stream == nil || *r.Stream }

// Calibrated reports whether prompts are fitted to the engine's count (the
// default).
func (r Request) Calibrated() bool { return r.Calibrate == nil || *r.Calibrate }

// Engine kinds.
const (
	KindSim      = "sim"      // the built-in simulated engine, started in-process
	KindExternal = "external" // an engine already running at BaseURL
	KindLaunch   = "launch"   // a real engine llmbench starts and stops (Launch)
)

// Where the built-in engine runs (Engine.Process).
const (
	ProcessSeparate = "separate"
	ProcessInline   = "inline"
)

// Engine says which engine is under test.
type Engine struct {
	// Kind is sim, external or launch. Required.
	Kind string `yaml:"kind"`
	// Dialect is the engine's metrics dialect. sim: the one it speaks, sglang
	// (default), vllm or fastdeploy. external: "" (default) = detect from /metrics.
	Dialect string `yaml:"dialect,omitempty"`
	// BaseURL is the OpenAI-compatible API root of an external engine, e.g.
	// http://host:8000/v1. Required for external, not allowed for sim.
	BaseURL string `yaml:"base_url,omitempty"`
	// MetricsURL is an external engine's Prometheus /metrics URL; "" = no scrape.
	MetricsURL string `yaml:"metrics_url,omitempty"`
	// APIKeyEnv names the environment variable holding the API key ("" = none).
	// The key itself never appears in a scenario.
	APIKeyEnv string `yaml:"api_key_env,omitempty"`

	// Preset names the built-in engine's performance model (sim only):
	// one of the model's presets; "" = its default.
	Preset string `yaml:"preset,omitempty"`
	// Sim is the built-in engine's performance model (sim only), carried as
	// plain data: as loaded, the file's overrides by YAML name; once
	// ResolveEngine has run, the model's parameters (the preset's values with
	// the overrides decoded onto them). In the file, name only the parameters
	// to change; Resolved writes them all.
	Sim any `yaml:"sim,omitempty"`
	// Faults are deliberate misbehaviours of the built-in engine (sim only),
	// carried like Sim; none by default.
	Faults any `yaml:"faults,omitempty"`
	// Process says where the built-in engine runs (sim only): separate
	// (default), a child process, so its CPU and garbage collector stay out
	// of the client's timestamps and self-measurement; or inline, in
	// llmbench's own process.
	Process string `yaml:"process,omitempty"`

	// Launch is the real engine llmbench starts for the run and stops after
	// it (kind launch only).
	Launch *Launch `yaml:"launch,omitempty"`
}

// Launch says how to start a real engine. Its output goes to engine.log in
// the run directory; llmbench waits until it answers before sending load.
type Launch struct {
	// Kind is sglang, vllm, fastdeploy, llamacpp (each with a default command
	// line; any engine family with a launch command, package engines) or
	// command (Command says it all). Required.
	Kind string `yaml:"kind"`
	// Model is what the engine loads (a model id or path). Default: the
	// scenario's model. Required for the named kinds.
	Model string `yaml:"model,omitempty"`
	// Command is the argv of kind command, or replaces a named kind's default
	// command line; {host}, {port}, {metrics_port} and {model} are filled in.
	Command []string `yaml:"command,omitempty"`
	// Host and Port the engine listens on. Default 127.0.0.1 and a free port.
	Host string `yaml:"host,omitempty"`
	Port int    `yaml:"port,omitempty"`
	// MetricsPort is where engines that serve /metrics on their own port
	// (FastDeploy) serve it. Default a free port.
	MetricsPort int `yaml:"metrics_port,omitempty"`
	// Env adds NAME=value pairs to the engine's environment.
	Env []string `yaml:"env,omitempty"`
	// Extra arguments appended to the command line.
	Extra []string `yaml:"extra,omitempty"`
	// ReadyTimeout bounds the wait for the engine to answer (model loading is
	// slow). Default 10m.
	ReadyTimeout time.Duration `yaml:"ready_timeout,omitempty"`
	// ReadyPath is the path probed for readiness. Default per kind
	// (/health, or /v1/models for command).
	ReadyPath string `yaml:"ready_path,omitempty"`
	// Dir is the engine's working directory, relative to the scenario file.
	// Default the current directory.
	Dir string `yaml:"dir,omitempty"`
	// NoMetrics says the engine has no /metrics (e.g. Ollama): no scrape.
	NoMetrics bool `yaml:"no_metrics,omitempty"`
	// LogHeadMiB and LogTailMiB bound engine.log: it keeps the first and
	// the last MiB of the engine's output, and notes (in engine.log and
	// run.json) what it dropped between them. Default 16 and 16.
	LogHeadMiB int `yaml:"log_head_mib,omitempty"`
	LogTailMiB int `yaml:"log_tail_mib,omitempty"`
}

// Workload describes the load and the requests.
//
// The load has one of three shapes:
//   - one load (concurrency, rate or stages) with duration and/or requests,
//     optionally preceded by a warmup and followed by a cooldown;
//   - a sweep: one measured phase per point, each lasting duration/requests;
//   - an explicit list of phases, each with its own load (or this one) and limits;
//   - or a trace replay, whose file gives both arrivals and lengths.
type Workload struct {
	// LoadSpec is the main phase's load, and the load phases inherit.
	LoadSpec `yaml:",inline"`
	// Sweep runs one phase per load point, each of the main phase's length.
	Sweep *Sweep `yaml:"sweep,omitempty"`
	// Search finds the largest load (rate or concurrency) whose SLO verdict
	// passes, one measured probe phase at a time of the main phase's length.
	Search *Search `yaml:"search,omitempty"`
	// Trace replays a request trace: its timestamps pace an open loop and its
	// lengths size the requests.
	Trace *Trace `yaml:"trace,omitempty"`
	// Limits end the main phase (each sweep point, the trace replay).
	Limits `yaml:",inline"`
	// Warmup runs before the measured phases, not measured; it inherits the
	// load of the first measured phase unless it sets its own.
	Warmup *Phase `yaml:"warmup,omitempty"`
	// Cooldown runs after the main phase without waiting for it to drain, not
	// measured, so the main phase's last requests finish under steady load.
	Cooldown *Phase `yaml:"cooldown,omitempty"`
	// Phases lists the phases explicitly (instead of the main phase, warmup and cooldown).
	Phases []Phase `yaml:"phases,omitempty"`
	// Abort stops the run early when requests keep failing.
	Abort Abort `yaml:"abort,omitempty"`
	// LateAfter is how far past its intended time an open-loop arrival may be
	// sent before it counts as late. Default 10ms.
	LateAfter time.Duration `yaml:"late_after"`
	// Timeout bounds one request, its whole stream included: a request
	// still going after it fails with class timeout, so an engine that
	// hangs cannot hold a run (and a CI job) forever. Default 30m; 0s none.
	Timeout time.Duration `yaml:"timeout"`
	// StallTimeout ends a request from which nothing has arrived for this
	// long (no response headers yet, or no byte since the last one) with
	// class stalled, apart from timeout: a server that never answers, or a
	// stream that stops while its connection stays open. Default 5m; 0s
	// none. Measured by one watchdog per run, a few looks per stall time
	// (docs/decisions/0046).
	StallTimeout time.Duration `yaml:"stall_timeout"`

	// Dataset says where prompts come from. Default: synthetic.
	Dataset Dataset `yaml:"dataset,omitempty"`
	// Prompt is the prompt length in tokens of the built-in engine's tokenizer
	// (one token per whitespace-separated word): of each request for a
	// synthetic dataset, of the question after the shared prefix, of each user
	// turn in a multi-turn conversation. Default 256.
	Prompt Length `yaml:"prompt_tokens,omitempty"`
	// Output is the output length in tokens: requests carry it as max_tokens
	// (with ignore_eos, so outputs hit it). For sharegpt and jsonl datasets
	// the file's own length wins unless this is set. Default 128.
	Output Length `yaml:"output_tokens,omitempty"`
	// IgnoreEOS asks the engine to generate exactly max_tokens. Default true.
	IgnoreEOS *bool `yaml:"ignore_eos"`
	// Cache is the engine's prefix cache at the start of every measured
	// phase (each sweep point, probe and phase): cold empties it first,
	// warm (default) leaves what earlier phases put there (cache.go).
	Cache string `yaml:"cache,omitempty"`
	// Images adds synthetic images to every request (scenarios/images.go).
	Images *Images `yaml:"images,omitempty"`
}

// Arrival processes of an open loop.
const (
	ArrivalConstant = "constant" // evenly spaced, exactly Rate per second
	ArrivalPoisson  = "poisson"  // exponential gaps with mean 1/Rate
	ArrivalGamma    = "gamma"    // gamma gaps with mean 1/Rate and coefficient of variation CV
)

// What an open loop does with an arrival when MaxConcurrency requests are in flight.
const (
	CappedDrop = "drop" // do not send it; count it dropped (k6's dropped_iterations)
	CappedWait = "wait" // send it when a request finishes; count it late
)

// LoadSpec is an arrival process: a closed loop of Concurrency users, an open
// loop of Rate arrivals per second, or Stages that ramp either linearly.
// Exactly one of Concurrency, Rate and Stages is set.
type LoadSpec struct {
	// Concurrency is the number of closed-loop users, each sending its next
	// request when its last one finished (and ThinkTime passed).
	Concurrency int `yaml:"concurrency,omitempty"`
	// ThinkTime is a closed-loop user's pause between its requests: a
	// duration ("2s") or {dist: uniform, min, max} / {dist: exponential, mean}.
	// Default none.
	ThinkTime Think `yaml:"think_time,omitempty"`
	// Rate is the open-loop arrival rate in requests per second.
	Rate float64 `yaml:"rate,omitempty"`
	// Stages ramp the rate or the concurrency linearly from one target to the
	// next (k6 style), starting from 0; a stage of duration 0 jumps.
	Stages []Stage `yaml:"stages,omitempty"`
	// Arrival is the open-loop process: constant, poisson or gamma. Default
	// poisson, like vLLM's bench serve.
	Arrival string `yaml:"arrival,omitempty"`
	// CV is gamma arrivals' coefficient of variation of the gaps (vLLM's
	// burstiness is 1/CV²): 1 is Poisson, above 1 burstier, below 1 more
	// regular. Default 1.
	CV float64 `yaml:"cv,omitempty"`
	// MaxConcurrency caps an open loop's requests in flight; 0 (default) = no cap.
	MaxConcurrency int `yaml:"max_concurrency,omitempty"`
	// WhenCapped is what happens to an arrival at the cap: drop (default) or wait.
	WhenCapped string `yaml:"when_capped,omitempty"`
}

// Stage is one leg of a ramp: over Duration, the target moves linearly from
// the previous stage's (0 before the first) to this one's Rate or Concurrency.
type Stage struct {
	Duration    time.Duration `yaml:"duration"`
	Rate        float64       `yaml:"rate,omitempty"`
	Concurrency int           `yaml:"concurrency,omitempty"`

	ofRate bool // the file named a rate (a target of 0 is still a rate or a concurrency)
}

// OfRate reports whether the stage ramps a rate (else a concurrency).
func (s Stage) OfRate() bool { return s.ofRate }

// Open reports whether the load is an open loop: a rate, or stages of rates.
func (l LoadSpec) Open() bool { return l.open() }

// Limits end a phase: after Duration, or once Requests were sent, whichever
// comes first. At least one is required (stages and traces end by themselves).
type Limits struct {
	Duration time.Duration `yaml:"duration,omitempty"`
	Requests int           `yaml:"requests,omitempty"`
	// Until: decided ends the phase as soon as its SLO verdict is pass or
	// fail (never in its first quarter), Duration and Requests still
	// bounding it. Needs slo.
	Until string `yaml:"until,omitempty"`
}

// Phase is one stretch of the run.
type Phase struct {
	// Name identifies the phase in results (letters, digits, '.', '_', '-').
	// Required in phases; warmup and cooldown are named so.
	Name string `yaml:"name,omitempty"`
	// Measured says whether the phase's requests count in the results.
	// Default true in phases; warmup and cooldown are never measured.
	Measured *bool `yaml:"measured,omitempty"`
	// Drain makes the phase wait until every request of the previous phase
	// finished before it starts, so server counters cover it alone.
	// Default true; cooldown false.
	Drain *bool `yaml:"drain,omitempty"`
	// LoadSpec is the phase's own load; when it sets none of concurrency, rate and
	// stages it inherits the workload's.
	LoadSpec `yaml:",inline"`
	Limits   `yaml:",inline"`
	// Cache is this phase's prefix cache at its start, cold or warm
	// (default: the workload's cache). Not in warmup and cooldown.
	Cache string `yaml:"cache,omitempty"`
}

// Sweep is a set of load points, each run as its own measured phase.
// Exactly one of Rates, Concurrencies and Auto is set.
type Sweep struct {
	// Rates are open-loop rates (requests/s), using the workload's arrival.
	Rates []float64 `yaml:"rates,omitempty"`
	// Concurrencies are closed-loop user counts.
	Concurrencies []int `yaml:"concurrencies,omitempty"`
	// Auto finds the range itself: a synchronous baseline (one user), a
	// max-throughput probe, then Points open-loop rates evenly spaced from
	// the baseline's throughput up to the probe's.
	Auto *AutoSweep `yaml:"auto,omitempty"`
}

// AutoSweep configures an automatic sweep.
type AutoSweep struct {
	// Points is the number of open-loop rates after the baseline and the probe. Default 5.
	Points int `yaml:"points"`
	// ProbeConcurrency is the closed-loop user count of the max-throughput probe. Default 256.
	ProbeConcurrency int `yaml:"probe_concurrency"`
}

// Trace formats.
const (
	TraceMooncake = "mooncake" // JSONL: timestamp (ms), input_length, output_length, hash_ids
	TraceAzure    = "azure"    // CSV: TIMESTAMP, ContextTokens, GeneratedTokens
	TraceBurstGPT = "burstgpt" // CSV: Timestamp (s), Model, Request tokens, Response tokens, ...
	// Agentic traces: sessions of calls replayed with the engine's own
	// replies threaded back (docs/decisions/1600-agentic-trace-replay.md).
	TraceWeka    = "weka"    // JSON per session (AgentX/Weka): requests of type n/s/subagent, t, in, out, hash_ids
	TraceCopilot = "copilot" // JSONL, a session a line: the published Copilot traces (tokens, tool_batches) or llmbench's rendering (tool_batch, parent_session_id)
	// TraceAzureMultimodal is the Azure LMM inference trace 2025 (CSV:
	// TIMESTAMP, NumImages, ContextTokens, GeneratedTokens).
	TraceAzureMultimodal = "azure_multimodal"
)

// TraceFormats lists the trace formats, in the order messages name them.
func TraceFormats() []string {
	return []string{TraceMooncake, TraceAzure, TraceBurstGPT, TraceAzureMultimodal, TraceWeka, TraceCopilot}
}

// AgenticTrace reports whether format is a trace of agent sessions, whose
// calls are threaded with the engine's replies.
func AgenticTrace(format string) bool { return format == TraceWeka || format == TraceCopilot }

// DefaultSessionHeader is the header every agentic call carries its
// session's id in; Trace.SessionHeader names one more.
const DefaultSessionHeader = "X-Session-Id"

// Trace is a request trace to replay.
type Trace struct {
	// Format is one of TraceFormats. Required.
	Format string `yaml:"format"`
	// Path is the trace file, relative to the scenario file. Required.
	Path string `yaml:"path"`
	// TimeScale multiplies the trace's time offsets: 0.5 replays twice as
	// fast, 2 half as fast. Default 1.
	TimeScale float64 `yaml:"time_scale"`
	// BlockSize is the number of tokens each mooncake hash_id stands for:
	// requests sharing a hash_id share that block of prompt text. Default 512.
	BlockSize int `yaml:"block_size,omitempty"`
	// SessionHeader names a header that carries each call's session id
	// besides X-Session-Id (a router's affinity key, such as
	// "x-session-affinity"), for the agentic formats only. Default none.
	SessionHeader string `yaml:"session_header,omitempty"`
	// ImageTokens is what one image counts in an azure_multimodal trace's
	// ContextTokens (text and images together): a request's text is
	// ContextTokens − NumImages × ImageTokens words (at least 1). Default 0.
	ImageTokens int `yaml:"image_tokens,omitempty"`
}

// Abort ends the run early, aborting in-flight requests, when requests keep
// failing. A request canceled by the run itself is not a failure.
type Abort struct {
	// Errors aborts once this many requests failed; 0 (default) = never.
	Errors int `yaml:"errors,omitempty"`
	// ErrorRate aborts once the fraction of finished requests that failed
	// exceeds it (in (0, 1]); 0 (default) = never.
	ErrorRate float64 `yaml:"error_rate,omitempty"`
	// MinRequests is how many requests must have finished before ErrorRate
	// applies. Default 20 when ErrorRate is set.
	MinRequests int `yaml:"min_requests,omitempty"`
	// Unreachable aborts once no request could connect to the engine for
	// this long: it is gone, and closed-loop users would only hammer a
	// refused port. Default 5s; 0s never aborts (a failover test).
	Unreachable time.Duration `yaml:"unreachable"`
	// FirstFailures aborts when the first this many finished requests all
	// failed: nothing works (a wrong model name, a missing API key), and a
	// long run would only repeat it. Default 20; 0 never aborts.
	FirstFailures int `yaml:"first_failures"`
}

// Dataset types.
const (
	DatasetSynthetic    = "synthetic"     // generated text of prompt_tokens words
	DatasetShareGPT     = "sharegpt"      // ShareGPT JSON: first human turn, the model turn's length as output
	DatasetJSONL        = "jsonl"         // one {"messages": [...]} or {"prompt": "..."} per line, optional max_tokens
	DatasetSharedPrefix = "shared_prefix" // Groups × PromptsPerGroup prompts; each group shares a system prompt
	DatasetMultiTurn    = "multi_turn"    // conversations of Turns requests whose history grows turn by turn
)

// Dataset says where requests' messages come from.
type Dataset struct {
	// Type is synthetic (default), sharegpt, jsonl, shared_prefix or multi_turn.
	Type string `yaml:"type"`
	// Path is the data file (sharegpt, jsonl), relative to the scenario file.
	Path string `yaml:"path,omitempty"`
	// Groups is the number of shared-prefix groups (shared_prefix).
	Groups int `yaml:"groups,omitempty"`
	// PromptsPerGroup is the number of distinct prompts per group (shared_prefix).
	PromptsPerGroup int `yaml:"prompts_per_group,omitempty"`
	// PrefixTokens is the shared system prompt's length (shared_prefix,
	// required) or a conversation's system prompt length (multi_turn, default 0).
	PrefixTokens int `yaml:"prefix_tokens,omitempty"`
	// Turns is the number of requests per conversation (multi_turn).
	Turns int `yaml:"turns,omitempty"`
}

// Length distributions.
const (
	DistFixed     = "fixed"     // always Value
	DistUniform   = "uniform"   // uniform integer in [Min, Max]
	DistNormal    = "normal"    // rounded normal of Mean and StdDev, clamped to [Min, Max]
	DistLognormal = "lognormal" // rounded lognormal whose own mean and stddev are Mean and StdDev, clamped
	DistEmpirical = "empirical" // drawn from the histogram in File
)

// Length is a token length distribution. In YAML a plain integer is a fixed
// length (prompt_tokens: 128, the same as {dist: fixed, value: 128}); a mapping
// names the distribution ({dist: uniform, min: 64, max: 256}). Lengths are at
// least 1.
//
// The empirical File is CSV: lines "tokens,weight", or "min,max,weight" for
// a bin drawn uniformly; blank lines, '#' comments and a header line are allowed.
type Length struct {
	Dist   string  `yaml:"dist"`
	Value  int     `yaml:"value,omitempty"`  // fixed
	Min    int     `yaml:"min,omitempty"`    // uniform (required); normal, lognormal (clamp, default 1)
	Max    int     `yaml:"max,omitempty"`    // uniform (required); normal, lognormal (clamp, default none)
	Mean   float64 `yaml:"mean,omitempty"`   // normal, lognormal
	StdDev float64 `yaml:"stddev,omitempty"` // normal, lognormal
	File   string  `yaml:"file,omitempty"`   // empirical: histogram file, relative to the scenario file
}

// Think-time distributions.
const (
	ThinkExponential = "exponential" // exponential with mean Mean
)

// Think is a closed-loop user's pause between requests. In YAML a duration
// string is a fixed pause; a mapping is {dist: uniform, min, max} or
// {dist: exponential, mean}.
type Think struct {
	Dist  string        `yaml:"dist"`
	Value time.Duration `yaml:"value,omitempty"` // fixed
	Min   time.Duration `yaml:"min,omitempty"`   // uniform
	Max   time.Duration `yaml:"max,omitempty"`   // uniform
	Mean  time.Duration `yaml:"mean,omitempty"`  // exponential
}

// Scrape says how to poll the engine's /metrics.
type Scrape struct {
	// Interval between scrapes. Default 1s.
	Interval time.Duration `yaml:"interval"`
	// Timeout of one scrape; at most Interval. Default Interval.
	Timeout time.Duration `yaml:"timeout"`
	// URL to scrape; "" (default) = the engine's metrics URL.
	URL string `yaml:"url,omitempty"`
	// Targets are several /metrics URLs of one service's replicas, scraped
	// each on its own, stored apart and summed for the server's view;
	// instead of url.
	Targets []string `yaml:"targets,omitempty"`
	// Prometheus reads the engine fleet's metrics from a Prometheus server
	// that already scrapes it, through its HTTP API, instead of scraping the
	// engine; instead of url and targets.
	Prometheus *PrometheusSource `yaml:"prometheus,omitempty"`
	// GPU scrapes the GPUs' telemetry exporter beside the engine (gpu.go).
	GPU *GPUScrape `yaml:"gpu,omitempty"`
	// OTLP receives the engine's per-request trace spans (otlp.go).
	OTLP *OTLPReceiver `yaml:"otlp,omitempty"`
	// SGLangExport reads SGLang's per-request metrics export (sglangexport.go).
	SGLangExport *SGLangExport `yaml:"sglang_export,omitempty"`
}

// PrometheusSource is a Prometheus server and the series of one engine fleet in it.
type PrometheusSource struct {
	// URL is the server's base URL, e.g. http://prometheus:9090. Required.
	URL string `yaml:"url"`
	// Selector is extra PromQL label matchers without braces, e.g.
	// job="vllm",namespace="llm"; "" = every series of the dialect's names.
	Selector string `yaml:"selector,omitempty"`
	// By is the label that tells replicas apart. Default instance.
	By string `yaml:"by,omitempty"`
}

// SLO bounds one request's latencies: a request is good (counts towards
// goodput) when it succeeded within every bound that is set.
type SLO struct {
	TTFT time.Duration `yaml:"ttft,omitempty"`
	TPOT time.Duration `yaml:"tpot,omitempty"`
	E2E  time.Duration `yaml:"e2e,omitempty"`
	// Target is the share of requests that must be good for a load to meet
	// the SLO (a search's probes, a phase run until decided). Default 99%.
	Target Fraction `yaml:"target,omitempty"`
}

// Gates carries CI pass/fail thresholds, opaque to scenarios: each is one
// expression for the gates package to parse (e.g. "client.ttft.p99 < 500ms").
type Gates struct {
	Thresholds []string `yaml:"thresholds"`
}
