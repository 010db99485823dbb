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
// uncertain (well within 1 % on a quiet host); the GPUs, their labels and utilisation
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
	// The reads' uncertainty is the machine's: where in its fetch each
	// read was taken. On a quiet host it is a few mJ, so the bound is far
	// inside 1 %; under -race beside two CPU hogs the fetches took 118 ms
	// and a bound of 1 % (5.5 J) was narrower than what the timing leaves
	// open (±33 J), so 1 % is not asserted: the reads' own bound is.
	slack := idle*(before.Duration+after.Duration).Seconds() + 0.004 // whole mJ per GPU
	if math.Abs(got.Joules-want) > slack {
		t.Errorf("energy %.4f J, truth %.4f J (±%.4f, the reads' own durations)", got.Joules, want, slack)
	}
	t.Logf("energy %.4f J, truth %.4f J: %.3f %% off, the reads' durations leave ±%.3f %%", got.Joules, want,
		100*math.Abs(got.Joules-want)/want, 100*slack/want)
	if u := after.Snapshot.Gauges[scrape.GPUUtilization]; u <= 0 || u > 1 {
		t.Errorf("utilization after a busy window %v", u)
	}
	if pw := after.Snapshot.Gauges[scrape.GPUPower]; pw < idle {
		t.Errorf("power %v W below idle %v W after a busy window", pw, idle)
	}
}
