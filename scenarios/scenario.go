// Package scenarios is the YAML file format of llmbench: types, defaults, and
// strict validation whose errors name file:line and the field. The example
// scenarios live beside it and are embedded, so every example is tested.
// It starts nothing.
package scenarios

import "time"

// Scenario is one validated scenario file with defaults filled.
type Scenario struct {
	Name     string   `yaml:"name"`
	Seed     int64    `yaml:"seed"`
	Model    string   `yaml:"model"`
	Engine   Engine   `yaml:"engine"`
	Workload Workload `yaml:"workload"`
	Scrape   Scrape   `yaml:"scrape"`
}

// Engine says which engine is under test.
type Engine struct {
	Kind       string `yaml:"kind"`        // sim | external
	Dialect    string `yaml:"dialect"`     // sglang | vllm | fastdeploy (sim: the one it speaks; external: "" = detect)
	BaseURL    string `yaml:"base_url"`    // external: OpenAI-compatible root, e.g. http://host:8000/v1
	MetricsURL string `yaml:"metrics_url"` // external: /metrics URL ("" = no scrape)
	APIKeyEnv  string `yaml:"api_key_env"` // external: name of the environment variable holding the API key
}

// Workload describes the load.
type Workload struct {
	Concurrency int           `yaml:"concurrency"` // closed loop: N users, each sends its next request when the last finished
	Rate        float64       `yaml:"rate"`        // open loop: requests per second
	Arrival     string        `yaml:"arrival"`     // open loop: constant | poisson
	Duration    time.Duration `yaml:"duration"`    // stop sending after this long
	Requests    int           `yaml:"requests"`    // or after this many requests
	Prompt      Length        `yaml:"prompt_tokens"`
	Output      Length        `yaml:"output_tokens"`
}

// Length is a token length distribution: fixed (Min == Max) or uniform in [Min, Max].
type Length struct {
	Dist string `yaml:"dist"` // fixed | uniform
	Min  int    `yaml:"min"`
	Max  int    `yaml:"max"`
}

// Scrape says how to poll the engine's /metrics.
type Scrape struct {
	Interval time.Duration `yaml:"interval"`
	Timeout  time.Duration `yaml:"timeout"`
	URL      string        `yaml:"url"` // "" = the engine's metrics URL
}
