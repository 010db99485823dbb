package scrape_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/scrape"
)

// TestBuiltInDCGMExporter scrapes the built-in engine's emulated DCGM
// exporter around a burst of requests: the energy counter's increase equals
// the power model's truth (idle power over the window between the reads,
// plus what the passes charged) within what the reads' own durations leave
// uncertain, and well within 1 %; the GPUs, their labels and utilisation
// are there.
func TestBuiltInDCGMExporter(t *testing.T) {
	t.Parallel()
	p, err := sim.Preset("h100x4-llama3-70b")
	if err != nil {
		t.Fatal(err)
	}
	p.Jitter = 0
	p.DecodeBase, p.PrefillPerToken = 2*time.Millisecond, 5*time.Microsecond // quick passes, the same power model
	e, err := sim.New(sim.Config{Dialect: "vllm", Params: p})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ep, err := e.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.Stop(context.Background()) }()
	root := strings.TrimSuffix(ep.BaseURL, "/v1")
	target := scrape.Target{URL: root + sim.DCGMPath, Dialect: scrape.DCGM, Timeout: 5 * time.Second}
	start := time.Now()

	truth0 := e.GPUTruth()
	before := target.Scrape(ctx, start)
	if !before.OK {
		t.Fatal(before.Error)
	}
	if g := before.Snapshot.GPUs; len(g) != 4 || g[3].GPU != "3" || g[3].Device != "nvidia3" || !strings.HasPrefix(g[3].UUID, "GPU-") {
		t.Fatalf("GPUs %+v", g)
	}
	for i := range 8 {
		body, _ := json.Marshal(map[string]any{"model": sim.DefaultModel, "max_tokens": 40, "ignore_eos": true,
			"messages": []map[string]string{{"role": "user", "content": strings.Repeat("word ", 100+i)}}})
		resp, err := http.Post(ep.BaseURL+"/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	truth1 := e.GPUTruth()
	after := target.Scrape(ctx, start)
	if !after.OK {
		t.Fatal(after.Error)
	}
	got, ok := scrape.WindowEnergy([]scrape.Row{before, after})
	if !ok || got.Method != scrape.EnergyFromCounter {
		t.Fatalf("energy %+v %v", got, ok)
	}
	if truth1.Generated-truth0.Generated != 8*40 {
		t.Errorf("generated %d tokens, want 320", truth1.Generated-truth0.Generated)
	}
	idle := p.GPUIdleWatts * float64(p.GPUCount())
	window := (after.At + after.Duration/2) - (before.At + before.Duration/2)
	want := truth1.TokenJoules - truth0.TokenJoules + idle*window.Seconds()
	slack := idle*(before.Duration+after.Duration).Seconds() + 0.004 // where in its fetch each read was taken; whole mJ per GPU
	if math.Abs(got.Joules-want) > slack || math.Abs(got.Joules-want) > 0.01*want {
		t.Errorf("energy %.4f J, truth %.4f J (±%.4f)", got.Joules, want, slack)
	}
	if u := after.Snapshot.Gauges[scrape.GPUUtilization]; u <= 0 || u > 1 {
		t.Errorf("utilization after a busy window %v", u)
	}
	if pw := after.Snapshot.Gauges[scrape.GPUPower]; pw < idle {
		t.Errorf("power %v W below idle %v W after a busy window", pw, idle)
	}
}
