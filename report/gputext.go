package report

import (
	"fmt"
	"strings"
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
	}
	tab := textTable{keyCols: 1}
	tab.add("phase", "cache", "cached tokens", "energy/token", "energy/request", "GPU util", "power")
	rows := 0
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
			perToken, perRequest = joulesOr(g.EnergyPerOutputTokenJ), joulesOr(g.EnergyPerRequestJ)
			if g.Utilization != nil {
				util = fmt.Sprintf("%.0f %%", *g.Utilization*100)
			}
			power = fmt.Sprintf("%.0f W", g.MeanPowerW)
		}
		tab.add(ph.Name, cache, cached, perToken, perRequest, util, power)
		rows++
	}
	if rows > 0 {
		t.ew.Printf("\nper phase, GPU and prefix cache:\n")
		t.table(tab)
	}
	return t.ew.Err
}

// gpuLines are the GPU telemetry over the measured phases in two lines:
// what the GPUs drew, and what a token and a request cost.
func gpuLines(g *GPUResult) []string {
	first := fmt.Sprintf("GPU: %s over %.1f s, mean %.0f W", joules(g.EnergyJ), g.WindowS, g.MeanPowerW)
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
		cost = append(cost, joules(*g.EnergyPerOutputTokenJ)+" per output token")
	}
	if g.EnergyPerRequestJ != nil {
		cost = append(cost, joules(*g.EnergyPerRequestJ)+" per request")
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
	return joules(*v)
}

// joules prints an energy readably: mJ below 1 J, kJ from 10 kJ.
func joules(v float64) string {
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
