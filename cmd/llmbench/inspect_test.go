package main

import (
	"context"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/engine/sim"
)

func TestAPIRoot(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in, base string
		ok       bool
	}{
		{"http://gpu:8000", "http://gpu:8000/v1", true},
		{"http://gpu:8000/", "http://gpu:8000/v1", true},
		{"https://gpu:8000/v1", "https://gpu:8000/v1", true},
		{"http://gw/llm/v1/", "http://gw/llm/v1", true},
		{"http://gpu:8000/metrics", "", false},
		{"metrics.txt", "", false},
		{"testdata/sglang.prom", "", false},
	} {
		base, ok := apiRoot(tt.in)
		if base != tt.base || ok != tt.ok {
			t.Errorf("apiRoot(%q) = %q, %v; want %q, %v", tt.in, base, ok, tt.base, tt.ok)
		}
	}
}

// TestInspectAPIRoot: given the engine's API root, inspect finds its
// /metrics as a run would, says so, and inspects them.
func TestInspectAPIRoot(t *testing.T) {
	t.Parallel()
	_, ep := startSim(t, sim.Config{Dialect: sim.DialectVLLM})
	root := strings.TrimSuffix(ep.BaseURL, "/v1")
	for _, target := range []string{ep.BaseURL, root} {
		cio, stdout, stderr := testIO(nil)
		code := execute(context.Background(), cio, []string{"inspect", target})
		if code != exitOK || !strings.Contains(stdout.String(), "dialect   vllm") ||
			!strings.Contains(stderr.String(), "llmbench: engine: metrics at "+ep.MetricsURL) {
			t.Errorf("inspect %s: exit %d\nstdout:\n%s\nstderr:\n%s", target, code, stdout.String(), stderr.String())
		}
	}
}
