package gates

import (
	"fmt"
	"math"
	"slices"

	"github.com/llmbench-org/llmbench/report"
)

// gpuMetrics: the GPU telemetry's figures (report.GPUResult), over the
// measured phases or one phase: energy per output token and per request,
// the energy, the mean power and the mean utilisation.
func (v vocabularyBuilder) gpuMetrics() {
	gpu := func(get func(*report.GPUResult) (float64, bool, string)) func(*report.Summary) reading {
		return func(s *report.Summary) reading {
			if s.GPU == nil {
				return absent("the run has no GPU telemetry (scenario scrape.gpu)")
			}
			x, ok, why := get(s.GPU)
			if !ok {
				return absent("%s", why)
			}
			return value(x)
		}
	}
	ptr := func(p *float64, why string) (float64, bool, string) {
		if p == nil {
			return 0, false, why
		}
		return *p, true, ""
	}
	v.add(metric{name: "server.energy_per_token", unit: joules, better: lower,
		doc: "the GPUs' energy per output token over the measured phases (idle power included), J",
		read: gpu(func(g *report.GPUResult) (float64, bool, string) {
			return ptr(g.EnergyPerOutputTokenJ, "no successful request produced an output token")
		})})
	v.add(metric{name: "server.energy_per_request", unit: joules, better: lower,
		doc: "the GPUs' energy per successful request over the measured phases, J",
		read: gpu(func(g *report.GPUResult) (float64, bool, string) {
			return ptr(g.EnergyPerRequestJ, "no request succeeded")
		})})
	v.add(metric{name: "server.energy", unit: joules, better: lower, doc: "the GPUs' energy over the measured phases, J",
		read: gpu(func(g *report.GPUResult) (float64, bool, string) { return g.EnergyJ, true, "" })})
	v.add(metric{name: "server.gpu_power", unit: count, better: lower, doc: "the GPUs' mean power over the measured phases, W",
		read: gpu(func(g *report.GPUResult) (float64, bool, string) { return g.MeanPowerW, true, "" })})
	v.add(metric{name: "server.gpu_utilization", unit: fraction, better: neither,
		doc: "the GPUs' mean utilisation over the measured phases' scrapes (DCGM_FI_DEV_GPU_UTIL)",
		read: gpu(func(g *report.GPUResult) (float64, bool, string) {
			return ptr(g.Utilization, "the exporter reports no utilisation")
		})})
}

// fitsEnergy checks an energy literal's unit.
func fitsEnergy(p *parser, t token, q Quantity, m metric) error {
	if slices.Contains([]Unit{Joule, MilliJoule, KiloJoule, WattHour}, q.Unit) {
		return nil
	}
	if q.Unit == NoUnit {
		return p.errAt(t.pos, "%s is an energy: give a unit (%sJ, %smJ, %skJ or %sWh)", m.name, t.text, t.text, t.text, t.text)
	}
	return p.errAt(t.pos+len(t.text), "%s is an energy: %q is not an energy unit (J, mJ, kJ, Wh)", m.name, q.Unit)
}

// formatJoules prints an energy with a unit that keeps it readable.
func formatJoules(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e4:
		return fmt.Sprintf("%.2fkJ", v/1e3)
	case a >= 100:
		return fmt.Sprintf("%.0fJ", v)
	case a >= 1 || a == 0:
		return fmt.Sprintf("%.3gJ", v)
	default:
		return fmt.Sprintf("%.3gmJ", v*1e3)
	}
}
