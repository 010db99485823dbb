// Package scenarios is the YAML file format of llmbench: types, defaults, and
// strict validation whose errors name file:line and the field. The example
// scenarios live beside it and are embedded, so every example is tested.
// It starts nothing.
package scenarios

import "time"

// Scenario is one validated scenario file with defaults filled.
// Parse and Load are the only ways to get a valid one.
type Scenario struct {
	// Name identifies the scenario in run directories and request ids:
	// letters, digits, '.', '_' and '-', at most 64. Required.
	Name string `yaml:"name"`
	// Seed drives every random choice of the plan (arrivals, lengths, text).
	// Same scenario and seed, same plan. Default 1.
	Seed int64 `yaml:"seed"`
	// Model is the model name put in requests. Required for an external engine;
	// "" for the built-in engine means the name it serves by default.
	Model    string   `yaml:"model,omitempty"`
	Engine   Engine   `yaml:"engine"`
	Workload Workload `yaml:"workload"`
	Scrape   Scrape   `yaml:"scrape"`

	raw map[string]string // scalar text before ${VAR} substitution, by field path
}

// Engine kinds.
const (
	KindSim      = "sim"      // the built-in simulated engine, started in-process
	KindExternal = "external" // an engine already running at BaseURL
)

// Engine says which engine is under test.
type Engine struct {
	// Kind is sim or external. Required.
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
}

// Arrival processes of an open loop.
const (
	ArrivalConstant = "constant" // evenly spaced, exactly Rate per second
	ArrivalPoisson  = "poisson"  // exponential gaps with mean 1/Rate
)

// Workload describes the load: either a closed loop (Concurrency users, each
// sending its next request when the last one finished) or an open loop (Rate
// arrivals per second, whatever the engine does), until Duration has passed or
// Requests were sent, whichever comes first.
type Workload struct {
	// Concurrency is the number of closed-loop users. Set it or Rate.
	Concurrency int `yaml:"concurrency,omitempty"`
	// Rate is the open-loop arrival rate in requests per second. Set it or Concurrency.
	Rate float64 `yaml:"rate,omitempty"`
	// Arrival is the open-loop process: constant or poisson (default poisson,
	// like vLLM's bench serve). Only with Rate.
	Arrival string `yaml:"arrival,omitempty"`
	// Duration stops new requests after this long (e.g. "20s"). Set it, Requests, or both.
	Duration time.Duration `yaml:"duration,omitempty"`
	// Requests stops after this many requests were sent.
	Requests int `yaml:"requests,omitempty"`
	// Prompt is the prompt length in tokens of the built-in engine's tokenizer
	// (one token per whitespace-separated word). Default 256.
	Prompt Length `yaml:"prompt_tokens"`
	// Output is the output length in tokens; requests carry it as max_tokens
	// with ignore_eos, so outputs hit it. Default 128.
	Output Length `yaml:"output_tokens"`
}

// Length distributions.
const (
	DistFixed   = "fixed"   // always Value
	DistUniform = "uniform" // uniform integer in [Min, Max]
)

// Length is a token length distribution. In YAML a plain integer is a fixed
// length (prompt_tokens: 128, the same as {dist: fixed, value: 128}); a mapping
// names the distribution ({dist: uniform, min: 64, max: 256}). Lengths are at
// least 1.
type Length struct {
	Dist  string `yaml:"dist"`
	Value int    `yaml:"value,omitempty"` // fixed
	Min   int    `yaml:"min,omitempty"`   // uniform
	Max   int    `yaml:"max,omitempty"`   // uniform
}

// Scrape says how to poll the engine's /metrics.
type Scrape struct {
	// Interval between scrapes. Default 1s.
	Interval time.Duration `yaml:"interval"`
	// Timeout of one scrape; at most Interval. Default Interval.
	Timeout time.Duration `yaml:"timeout"`
	// URL to scrape; "" (default) = the engine's metrics URL.
	URL string `yaml:"url,omitempty"`
}
