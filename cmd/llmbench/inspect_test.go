package main

import (
	"context"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/engine/sim"
)

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

// inspect prints no password or token from the URL it was given, in text
// or JSON.
func TestInspectHidesURLSecrets(t *testing.T) {
	t.Parallel()
	_, ep := startSim(t, sim.Config{Dialect: sim.DialectVLLM})
	u := strings.Replace(ep.MetricsURL, "http://", "http://user:hunter2-secret@", 1) + "?token=tok-secret-9"
	for _, args := range [][]string{{"inspect", u}, {"inspect", "--json", u}} {
		cio, stdout, stderr := testIO(nil)
		code := execute(context.Background(), cio, args)
		out := stdout.String() + stderr.String()
		if code != exitOK || strings.Contains(out, "hunter2-secret") || strings.Contains(out, "tok-secret-9") {
			t.Errorf("%v: exit %d, output holds a secret or failed:\n%s", args, code, out)
		}
	}
}
