package live

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

// gpuRow is a GPU telemetry scrape of two GPUs: their summed power and
// energy counter, their mean utilisation, and GPU 1's clock-event reasons.
func gpuRow(at time.Duration, energyJ, powerW, util, reasons float64) scrape.Row {
	snap := &scrape.Snapshot{Dialect: scrape.DCGM,
		Gauges:   map[scrape.Concept]float64{scrape.GPUPower: powerW, scrape.GPUUtilization: util, scrape.GPUCount: 2},
		Counters: map[scrape.Concept]float64{scrape.GPUEnergy: energyJ},
		GPUs: []scrape.GPUReading{{GPU: "0", Values: map[string]float64{scrape.DCGMClockEvents: 0}},
			{GPU: "1", Values: map[string]float64{scrape.DCGMClockEvents: reasons}}}}
	return scrape.Row{Target: "http://gpu/metrics", At: at, OK: true, Snapshot: snap}
}

// TestGPULive: the live view shows the latest GPU scrape, a token's energy
// over the window (the energy counter's increase over the window's scrapes
// ÷ their time, over the window's output rate), the GPUs throttled now, and
// nothing once the exporter has been silent for a window.
func TestGPULive(t *testing.T) {
	t.Parallel()
	w := newWindow(Span)
	if g := w.progress(time.Second).GPU; g.Has || gpuSegment(g) != "" {
		t.Fatalf("before any GPU scrape: %+v", g)
	}
	s := time.Second
	w.addGPURow(&scrape.Row{Target: "http://gpu/metrics", At: 0, Error: "refused"})
	w.addGPURow(ptr(gpuRow(1*s, 1000, 300, 0.2, 1)))
	w.addGPURow(ptr(gpuRow(3*s, 1800, 500, 0.9, 0)))
	w.addGPURow(ptr(gpuRow(5*s, 2600, 420, 0.8, 0x4|0x1))) // a power cap
	for i := range 20 {
		r := client.Record{ID: "r", Status: 200, OutputTokens: 50, Sent: time.Duration(i) * 200 * time.Millisecond, End: time.Duration(i)*200*time.Millisecond + 100*time.Millisecond}
		w.addRecord(&r, time.Duration(i)*250*time.Millisecond)
	}
	p := w.progress(5 * s)
	g := p.GPU
	if !g.Has || g.PowerW != 420 || g.Utilization != 0.8 || g.GPUs != 2 || g.Throttled != 1 {
		t.Fatalf("GPU %+v", g)
	}
	power := (2600.0 - 1000) / 4 // W over the window's scrapes
	if p.OutputTokensPerSec <= 0 || !g.HasEnergyPerToken || math.Abs(g.EnergyPerTokenJ-power/p.OutputTokensPerSec) > 1e-9 {
		t.Errorf("energy per token %v (has %v), want %v at %v tokens/s", g.EnergyPerTokenJ, g.HasEnergyPerToken, power/p.OutputTokensPerSec, p.OutputTokensPerSec)
	}
	seg := gpuSegment(g)
	if !strings.HasPrefix(seg, "GPU 80% 420W ") || !strings.HasSuffix(seg, "J/tok (1 throttled)") {
		t.Errorf("segment %q", seg)
	}
	line := strings.Join(progressLines(p, 400), "\n")
	if !strings.Contains(line, seg) {
		t.Errorf("the progress line lacks %q:\n%s", seg, line)
	}
	if g := w.progress(5*s + Span + s).GPU; g.Has {
		t.Errorf("a silent exporter still shows: %+v", g)
	}
	// Without a counter, the latest power stands in for the window's.
	w2 := newWindow(Span)
	r := gpuRow(time.Second, 0, 250, 0.5, 0)
	delete(r.Snapshot.Counters, scrape.GPUEnergy)
	w2.addGPURow(&r)
	if g := w2.gpuLive(2*s, 100); !g.HasEnergyPerToken || g.EnergyPerTokenJ != 2.5 {
		t.Errorf("power only: %+v", g)
	}
}

func ptr[T any](v T) *T { return &v }
