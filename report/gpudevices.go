package report

import (
	"cmp"
	"slices"

	"github.com/llmbench-org/llmbench/scrape"
)

// GPUDevice is one GPU over a phase (or the measured phases): who it is, as
// the exporter labels it, and what it did, from its own values in each
// scrape (scrape.GPUReading). A figure the exporter does not export is
// absent, never zero.
type GPUDevice struct {
	Target string `json:"target"` // the exporter that reported it
	GPU    string `json:"gpu"`    // its index label
	UUID   string `json:"uuid,omitempty"`
	Model  string `json:"model,omitempty"`
	Host   string `json:"host,omitempty"`
	Pod    string `json:"pod,omitempty"`
	// Samples are the scrapes that read it.
	Samples int `json:"samples"`
	// EnergyJ is its energy counter's increase over each phase's window
	// in the order the scrapes read it (scrape.CounterIncrease: a reset on
	// the way counts from zero), summed over the phases.
	EnergyJ *float64 `json:"energy_j,omitempty"`
	// PowerMeanW and PowerMaxW: its power gauge over the samples.
	PowerMeanW *float64 `json:"power_mean_w,omitempty"`
	PowerMaxW  *float64 `json:"power_max_w,omitempty"`
	// Utilization and SMActive: the mean over the samples, 0–1.
	Utilization *float64 `json:"utilization,omitempty"`
	SMActive    *float64 `json:"sm_active,omitempty"`
	// MemoryUsedMaxBytes is the most framebuffer it had in use,
	// MemoryTotalBytes used + free at that sample.
	MemoryUsedMaxBytes *float64 `json:"memory_used_max_bytes,omitempty"`
	MemoryTotalBytes   *float64 `json:"memory_total_bytes,omitempty"`
	// SMClockMeanMHz and SMClockMinMHz: its SM clock over the samples; a
	// clock that drops under load is the first sign of throttling.
	SMClockMeanMHz *float64 `json:"sm_clock_mean_mhz,omitempty"`
	SMClockMinMHz  *float64 `json:"sm_clock_min_mhz,omitempty"`
	TempMaxC       *float64 `json:"temperature_max_c,omitempty"`
	// ClockEvents names every clock-event reason its samples held
	// (DCGM_FI_DEV_CLOCKS_EVENT_REASONS, NVML's bits: gpu_idle,
	// sw_power_cap, hw_thermal_slowdown, ...); ThrottledShare is the share
	// of its samples that held a slowdown (scrape.ThrottleReasons), absent where
	// the exporter does not export the reasons.
	ClockEvents    []string `json:"clock_events,omitempty"`
	ThrottledShare *float64 `json:"throttled_share,omitempty"`
}

// gpuKey identifies a GPU across scrapes: its exporter, host, UUID and
// index (the UUID alone when the exporter gives one would do, but a
// time-sliced exporter may not).
type gpuKey struct{ target, host, uuid, gpu string }

// deviceAcc gathers one GPU's samples.
type deviceAcc struct {
	dev                    GPUDevice
	energy                 float64
	hasEnergy              bool
	power, util, sm, clock []float64
	memMax, memTotal, temp float64
	hasMem, hasTemp        bool
	events                 uint64
	reasonSamples, slowed  int
}

// gpuDevices folds the chains (one target's rows over one phase each) into
// one GPUDevice per GPU, in target then index order.
func gpuDevices(chains [][]scrape.Row) []GPUDevice {
	accs := map[gpuKey]*deviceAcc{}
	var order []gpuKey
	for _, chain := range chains {
		// In the order the values were read, as the phase's own energy
		// (scrape.WindowEnergy): overlapping scrapes can end out of order.
		chain = slices.Clone(chain)
		scrape.SortByReadTime(chain)
		readings := map[gpuKey][]float64{} // each GPU's energy counter along this chain, mJ
		for _, r := range chain {
			if !r.OK || r.Snapshot == nil {
				continue
			}
			for _, g := range r.Snapshot.GPUs {
				k := gpuKey{r.Target, g.Host, g.UUID, g.GPU}
				a, ok := accs[k]
				if !ok {
					a = &deviceAcc{dev: GPUDevice{Target: r.Target, GPU: g.GPU, UUID: g.UUID, Model: g.Model, Host: g.Host, Pod: g.Pod}}
					accs[k] = a
					order = append(order, k)
				}
				a.add(g)
				if e, ok := g.Values[scrape.DCGMEnergy]; ok {
					readings[k] = append(readings[k], e)
				}
			}
		}
		for k, rs := range readings {
			if len(rs) >= 2 {
				a := accs[k]
				a.hasEnergy = true
				a.energy += scrape.CounterIncrease(rs) / 1e3
			}
		}
	}
	slices.SortStableFunc(order, func(a, b gpuKey) int {
		return cmp.Or(cmp.Compare(a.target, b.target), cmp.Compare(a.host, b.host), cmp.Compare(padIndex(a.gpu), padIndex(b.gpu)))
	})
	out := make([]GPUDevice, 0, len(order))
	for _, k := range order {
		out = append(out, accs[k].result())
	}
	return out
}

// add folds one sample of the GPU in (its energy counter is read along
// the chain, in gpuDevices).
func (a *deviceAcc) add(g scrape.GPUReading) {
	a.dev.Samples++
	v := g.Values
	if p, ok := v[scrape.DCGMPower]; ok {
		a.power = append(a.power, p)
	}
	if u, ok := v[scrape.DCGMGPUUtil]; ok {
		a.util = append(a.util, u/100)
	}
	if s, ok := v[scrape.DCGMSMActive]; ok {
		a.sm = append(a.sm, s)
	}
	if c, ok := v[scrape.DCGMSMClock]; ok {
		a.clock = append(a.clock, c)
	}
	if used, ok := v[scrape.DCGMFBUsed]; ok && (!a.hasMem || used*(1<<20) > a.memMax) {
		a.hasMem, a.memMax, a.memTotal = true, used*(1<<20), 0
		if free, ok := v[scrape.DCGMFBFree]; ok {
			a.memTotal = (used + free) * (1 << 20)
		}
	}
	if t, ok := v[scrape.DCGMGPUTemp]; ok && (!a.hasTemp || t > a.temp) {
		a.hasTemp, a.temp = true, t
	}
	reasons, ok := v[scrape.DCGMClockEvents]
	if !ok {
		reasons, ok = v[scrape.DCGMThrottleOld]
	}
	if ok && reasons >= 0 {
		m := uint64(reasons)
		a.reasonSamples++
		a.events |= m
		if m&scrape.ThrottleReasons != 0 {
			a.slowed++
		}
	}
}

func (a *deviceAcc) result() GPUDevice {
	d := a.dev
	ptr := func(v float64) *float64 { return &v }
	if a.hasEnergy {
		d.EnergyJ = ptr(a.energy)
	}
	d.PowerMeanW, d.Utilization, d.SMActive, d.SMClockMeanMHz = meanOf(a.power), meanOf(a.util), meanOf(a.sm), meanOf(a.clock)
	if len(a.power) > 0 {
		d.PowerMaxW = ptr(slices.Max(a.power))
	}
	if len(a.clock) > 0 {
		d.SMClockMinMHz = ptr(slices.Min(a.clock))
	}
	if a.hasMem {
		d.MemoryUsedMaxBytes = ptr(a.memMax)
		if a.memTotal > 0 {
			d.MemoryTotalBytes = ptr(a.memTotal)
		}
	}
	if a.hasTemp {
		d.TempMaxC = ptr(a.temp)
	}
	if a.reasonSamples > 0 {
		d.ClockEvents = scrape.ClockEventNames(a.events)
		d.ThrottledShare = ptr(float64(a.slowed) / float64(a.reasonSamples))
	}
	return d
}

// padIndex right-aligns a GPU index so that 10 sorts after 9.
func padIndex(s string) string {
	for len(s) < 8 {
		s = " " + s
	}
	return s
}
