package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/llmbench-org/llmbench/scrape"
)

// gpuCacheText writes the GPU telemetry's figures and each phase's prefix
// cache: what a token cost in energy, and which phases started cold and
// which warm, with the cache hits each saw.
func gpuCacheText(t *textRun) error {
	s := t.s
	if g := s.GPU; g != nil {
		t.ew.Printf("\n")
		for _, l := range gpuLines(g) {
			t.oneLine(l)
		}
		if rows := GPUDeviceRows(g.Devices); len(rows) > 0 {
			t.ew.Printf("\nper GPU, measured phases:\n")
			tab := textTable{keyCols: 1, rows: rows}
			t.table(tab)
		}
	}
	if rows := PhaseGPURows(s); len(rows) > 0 {
		t.ew.Printf("\nper phase, GPU and prefix cache:\n")
		t.table(textTable{keyCols: 1, rows: rows})
	}
	return t.ew.Err
}

// PhaseGPURows are the measured phases' GPU telemetry and prefix cache,
// one row each under a header row, as every report shows them; none when
// the run said nothing of either.
func PhaseGPURows(s Summary) [][]string {
	rows := [][]string{{"phase", "cache", "cached tokens", "energy/token", "energy/request", "GPU util", "power"}}
	for _, ph := range s.Phases {
		if !ph.Measured || (ph.GPU == nil && (ph.Cache == nil || ph.Cache.Default)) {
			continue // a run that said nothing of either: nothing to show
		}
		cache, cached := "—", "—"
		if c := ph.Cache; c != nil {
			cache = c.Mode
			if c.Default {
				cache += " (default)"
			}
			if c.Mode == "cold" && c.Reset != "ok" {
				cache = "cold (not reset)"
			}
			cached = fmt.Sprint(c.CachedTokens)
		}
		perToken, perRequest, util, power := "—", "—", "—", "—"
		if g := ph.GPU; g != nil {
			perToken, perRequest, util = joulesOr(g.EnergyPerOutputTokenJ), joulesOr(g.EnergyPerRequestJ), percentOr(g.Utilization)
			power = fmt.Sprintf("%.0f W", g.MeanPowerW)
		}
		rows = append(rows, []string{ph.Name, cache, cached, perToken, perRequest, util, power})
	}
	if len(rows) == 1 {
		return nil
	}
	return rows
}

// gpuLines are the GPU telemetry over the measured phases in two lines:
// what the GPUs drew, and what a token and a request cost.
func gpuLines(g *GPUResult) []string {
	first := fmt.Sprintf("GPU: %s over %.1f s, mean %.0f W", Joules(g.EnergyJ), g.WindowS, g.MeanPowerW)
	if g.Utilization != nil {
		first += fmt.Sprintf(", utilisation %.0f %%", *g.Utilization*100)
	}
	gpus := fmt.Sprintf("%d GPUs", g.GPUs)
	if g.GPUs == 1 {
		gpus = "1 GPU"
	}
	first += fmt.Sprintf(" (%s; %s)", gpus, g.Method)
	var cost []string
	if g.EnergyPerOutputTokenJ != nil {
		cost = append(cost, Joules(*g.EnergyPerOutputTokenJ)+" per output token")
	}
	if g.EnergyPerRequestJ != nil {
		cost = append(cost, Joules(*g.EnergyPerRequestJ)+" per request")
	}
	if len(cost) == 0 {
		return []string{first}
	}
	return []string{first, "  energy: " + strings.Join(cost, ", ") + " (idle power included)"}
}

func joulesOr(v *float64) string {
	if v == nil {
		return "—"
	}
	return Joules(*v)
}

// Joules prints an energy readably: mJ below 1 J, kJ from 10 kJ.
func Joules(v float64) string {
	switch {
	case v >= 1e4:
		return fmt.Sprintf("%.1f kJ", v/1e3)
	case v >= 100:
		return fmt.Sprintf("%.0f J", v)
	case v >= 1 || v == 0:
		return fmt.Sprintf("%.3g J", v)
	default:
		return fmt.Sprintf("%.3g mJ", v*1e3)
	}
}

// GPUDeviceHeader names the columns of GPUDeviceRows.
var GPUDeviceHeader = []string{"GPU", "model", "util", "SM active", "power mean / max", "energy", "memory used", "SM clock mean (min)", "throttled"}

// GPUDeviceRows are the GPUs one per row under GPUDeviceHeader, as every
// report shows them ("—" where the exporter does not say); none without
// devices.
func GPUDeviceRows(devs []GPUDevice) [][]string {
	if len(devs) == 0 {
		return nil
	}
	targets := map[string]bool{}
	for _, d := range devs {
		targets[d.Target] = true
	}
	rows := [][]string{GPUDeviceHeader}
	for _, d := range devs {
		name := d.GPU
		if d.Host != "" {
			name = d.Host + ":" + name
		}
		if len(targets) > 1 {
			name = d.Target + " " + name
		}
		power := "—"
		if d.PowerMeanW != nil {
			power = fmt.Sprintf("%.0f / %.0f W", *d.PowerMeanW, *d.PowerMaxW)
		}
		mem := "—"
		if d.MemoryUsedMaxBytes != nil {
			mem = fmt.Sprintf("%.1f GiB", *d.MemoryUsedMaxBytes/(1<<30))
			if d.MemoryTotalBytes != nil {
				mem += fmt.Sprintf(" of %.1f", *d.MemoryTotalBytes/(1<<30))
			}
		}
		clock := "—"
		if d.SMClockMeanMHz != nil {
			clock = fmt.Sprintf("%.0f MHz (%.0f)", *d.SMClockMeanMHz, *d.SMClockMinMHz)
		}
		rows = append(rows, []string{name, orDash(d.Model), percentOr(d.Utilization), percentOr(d.SMActive), power,
			joulesOr(d.EnergyJ), mem, clock, throttled(d)})
	}
	return rows
}

// throttled says how often a GPU was slowed and why: "0 %", "12 % (sw_power_cap)".
func throttled(d GPUDevice) string {
	if d.ThrottledShare == nil {
		return "—"
	}
	out := fmt.Sprintf("%.0f %%", *d.ThrottledShare*100)
	var why []string
	for _, e := range d.ClockEvents {
		if slices.Contains(throttleNames, e) {
			why = append(why, e)
		}
	}
	if len(why) > 0 {
		out += " (" + strings.Join(why, ", ") + ")"
	}
	return out
}

// throttleNames are the names of ThrottleReasons' bits.
var throttleNames = scrape.ClockEventNames(scrape.ThrottleReasons)

func percentOr(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.0f %%", *v*100)
}

// sweepHasGPU reports whether any point of the sweep has GPU telemetry: its
// per-point table then shows each point's utilisation and energy per token
// beside its load.
func sweepHasGPU(sw *SweepResult) bool {
	return slices.ContainsFunc(sw.Points, func(p SweepPoint) bool {
		return p.GPUUtilization != nil || p.EnergyPerOutputTokenJ != nil
	})
}
