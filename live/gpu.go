package live

import (
	"fmt"
	"time"

	"github.com/llmbench-org/llmbench/scrape"
)

// GPULive is what the GPU telemetry (scenario scrape.gpu) says now: its
// latest successful scrape, summed or averaged over the GPUs as the
// summary's are, and the energy of an output token over the live window.
// Has is false before the first scrape of it (or without one); each
// Has* is false where the exporter does not export the value.
type GPULive struct {
	Has         bool
	At          time.Duration
	GPUs        int
	PowerW      float64 // summed over the GPUs
	Utilization float64 // mean over the GPUs, 0–1
	// Throttled counts the GPUs whose clock-event reasons hold a slowdown
	// (scrape.ThrottleReasons) in the latest scrape.
	Throttled         int
	HasPower, HasUtil bool
	// EnergyPerTokenJ is the GPUs' mean power over the window (their
	// energy counter's increase over the window's scrapes, else the latest
	// power) over the window's output tokens per second.
	EnergyPerTokenJ   float64
	HasEnergyPerToken bool
}

// gpuSample is one GPU scrape the window keeps: when, and the energy
// counter (J) when the exporter has it.
type gpuSample struct {
	at        time.Duration
	energyJ   float64
	hasEnergy bool
}

// GPURow folds one GPU telemetry scrape into the window; the run's GPU
// scraper calls it from its own goroutine, once a scrape (not per chunk).
func (w *Window) GPURow(row scrape.Row) {
	w.mu.Lock()
	w.live.addGPURow(&row)
	w.mu.Unlock()
}

func (w *window) addGPURow(row *scrape.Row) {
	if !row.OK || row.Snapshot == nil {
		return
	}
	s := row.Snapshot
	g := GPULive{Has: true, At: row.At, GPUs: len(s.GPUs)}
	g.PowerW, g.HasPower = s.Gauges[scrape.GPUPower]
	g.Utilization, g.HasUtil = s.Gauges[scrape.GPUUtilization]
	for _, r := range s.GPUs {
		reasons, ok := r.Values[scrape.DCGMClockEvents]
		if !ok {
			reasons, ok = r.Values[scrape.DCGMThrottleOld]
		}
		if ok && reasons > 0 && uint64(reasons)&scrape.ThrottleReasons != 0 {
			g.Throttled++
		}
	}
	w.gpu = g
	e, hasEnergy := s.Counters[scrape.GPUEnergy]
	w.gpuSamples = append(w.gpuSamples, gpuSample{at: row.At, energyJ: e, hasEnergy: hasEnergy})
	cut := 0
	for cut < len(w.gpuSamples)-1 && row.At-w.gpuSamples[cut].at > w.span {
		cut++
	}
	w.gpuSamples = w.gpuSamples[cut:]
}

// gpuLive is the GPU view at now, its energy per token from the window's
// output rate. Samples that stopped coming age out: a dead exporter never
// shows an old window's figures as current.
func (w *window) gpuLive(now time.Duration, tokensPerSec float64) GPULive {
	g := w.gpu
	if !g.Has || now-g.At > w.span {
		return GPULive{}
	}
	power, ok := g.PowerW, g.HasPower
	if n := len(w.gpuSamples); n >= 2 {
		first, last := w.gpuSamples[0], w.gpuSamples[n-1]
		if d := (last.at - first.at).Seconds(); first.hasEnergy && last.hasEnergy && d > 0 && last.energyJ >= first.energyJ {
			power, ok = (last.energyJ-first.energyJ)/d, true
		}
	}
	if ok && tokensPerSec > 0 {
		g.EnergyPerTokenJ, g.HasEnergyPerToken = power/tokensPerSec, true
	}
	return g
}

// gpuSegment is the progress line's GPU figures: "GPU 85% 712W 0.52J/tok",
// with the GPUs throttled now; "" without GPU telemetry.
func gpuSegment(g GPULive) string {
	if !g.Has {
		return ""
	}
	s := "GPU"
	if g.HasUtil {
		s += fmt.Sprintf(" %.0f%%", 100*g.Utilization)
	}
	if g.HasPower {
		s += fmt.Sprintf(" %.0fW", g.PowerW)
	}
	if g.HasEnergyPerToken {
		s += fmt.Sprintf(" %.3gJ/tok", g.EnergyPerTokenJ)
	}
	if g.Throttled > 0 {
		s += fmt.Sprintf(" (%d throttled)", g.Throttled)
	}
	return s
}
