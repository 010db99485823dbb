package html

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

const synthGPUTarget = "http://engine.test:9400/metrics"

// gpuScrapes is a DCGM exporter's view of the synthetic run: two GPUs
// whose power and utilisation follow the requests in flight, scraped every
// half second and at each phase's boundaries (into meta, as a run does).
// GPU 1 hits its power cap when the engine is full.
func (s synth) gpuScrapes(records []client.Record, meta *rundir.RunMeta) []scrape.Row {
	var starts, ends []time.Duration
	for _, r := range records {
		starts, ends = append(starts, r.SentOnWire()), append(ends, r.End)
	}
	slices.Sort(starts)
	slices.Sort(ends)
	inflight := func(at time.Duration) float64 {
		si, _ := slices.BinarySearch(starts, at+1)
		ei, _ := slices.BinarySearch(ends, at+1)
		return float64(si - ei)
	}
	var end time.Duration
	for _, ph := range meta.Phases {
		end = max(end, ph.End)
	}
	type sample struct {
		at       time.Duration
		boundary func(scrape.Row)
	}
	var times []sample
	for t := time.Duration(0); t <= end+time.Second; t += 500 * time.Millisecond {
		times = append(times, sample{at: t})
	}
	for i := range meta.Phases {
		ph := &meta.Phases[i]
		times = append(times,
			sample{ph.Start - 2*time.Millisecond, func(r scrape.Row) { ph.GPUBefore = []scrape.Row{r} }},
			sample{ph.End + 2*time.Millisecond, func(r scrape.Row) { ph.GPUAfter = []scrape.Row{r} }})
	}
	sort.SliceStable(times, func(a, b int) bool { return times[a].at < times[b].at })
	energy := [2]float64{8.1e10, 7.9e10} // mJ since the driver loaded
	var rows []scrape.Row
	last := time.Duration(0)
	for _, smp := range times {
		busy := math.Min(inflight(smp.at)/synthCapacity, 1)
		snap := scrape.Snapshot{Dialect: scrape.DCGM, Gauges: map[scrape.Concept]float64{}, Counters: map[scrape.Concept]float64{}}
		for g := range 2 {
			power := 90 + (520+60*float64(g))*busy
			reasons := 1.0 // GpuIdle
			if busy > 0 {
				reasons = 0
			}
			if g == 1 && busy >= 1 {
				power, reasons = 600, 0x4 // SwPowerCap
			}
			energy[g] += power * (smp.at - last).Seconds() * 1e3
			snap.GPUs = append(snap.GPUs, scrape.GPUReading{GPU: string(rune('0' + g)), UUID: "GPU-synth-" + string(rune('0'+g)), Model: "NVIDIA H200", Host: "gpu-node-1",
				Values: map[string]float64{scrape.DCGMPower: math.Round(power*1000) / 1000, scrape.DCGMEnergy: math.Round(energy[g]),
					scrape.DCGMGPUUtil: math.Round(100 * busy), scrape.DCGMSMClock: 1980 - 200*float64(g)*busy, scrape.DCGMFBUsed: 126000, scrape.DCGMFBFree: 17771,
					scrape.DCGMClockEvents: reasons}})
			snap.Gauges[scrape.GPUPower] += math.Round(power*1000) / 1000
			snap.Gauges[scrape.GPUUtilization] += math.Round(100*busy) / 200
			snap.Counters[scrape.GPUEnergy] += math.Round(energy[g]) / 1e3
		}
		snap.Gauges[scrape.GPUCount] = 2
		last = smp.at
		row := scrape.Row{Target: synthGPUTarget, Wall: synthStart.Add(smp.at), At: smp.at, Duration: 3 * time.Millisecond,
			OK: true, Bytes: 9000, Snapshot: &snap, Status: 200, Format: "text"}
		if smp.boundary != nil {
			smp.boundary(row)
		}
		rows = append(rows, row)
	}
	return rows
}
