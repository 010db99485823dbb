// Package engine starts, finds and stops the engine under test: the built-in
// simulated engine (engine/sim), a real engine llmbench launches, or an
// external URL. It never measures the client.
package engine

import "context"

// Endpoint is where an engine can be reached.
type Endpoint struct {
	BaseURL    string // OpenAI-compatible API root, e.g. http://127.0.0.1:30000/v1
	MetricsURL string // Prometheus exposition, e.g. http://127.0.0.1:30000/metrics ("" when none)
	Dialect    string // metric dialect: sglang, vllm, fastdeploy, ... ("" = detect)
	Model      string // model name to put in requests
	// ContextTokens is the context one request may fill, as the engine
	// states it (ReadContext); 0 when unknown.
	ContextTokens int
	// Notes say what was found out rather than configured (a model read
	// from /v1/models, a metrics URL derived from the base URL, or why
	// there is none), for the run to print and keep.
	Notes []string
}

// Engine is an engine under test.
type Engine interface {
	Start(ctx context.Context) (Endpoint, error)
	Stop(ctx context.Context) error
}
