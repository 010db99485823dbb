package gates

import (
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report"
)

// TestEnergyGates: energy literals take J, mJ, kJ or Wh and nothing else;
// the GPU figures are read from the summary (one phase's from the phase),
// and are absent, with why, from a run without GPU telemetry.
func TestEnergyGates(t *testing.T) {
	t.Parallel()
	perToken, perRequest, util := 0.4, 52.0, 0.75
	g := &report.GPUResult{EnergyJ: 5200, MeanPowerW: 520, EnergyPerOutputTokenJ: &perToken, EnergyPerRequestJ: &perRequest, Utilization: &util}
	hot := 0.9
	with := report.Summary{GPU: g, Phases: []report.PhaseResult{{Name: "c8", Measured: true, GPU: &report.GPUResult{EnergyPerOutputTokenJ: &hot}}}}
	tests := []struct {
		expr   string
		s      report.Summary
		status Status
		value  float64
	}{
		{"server.energy_per_token < 0.5J", with, Pass, 0.4},
		{"server.energy_per_token < 500mJ", with, Pass, 0.4},
		{"server.energy_per_token < 300mJ", with, Fail, 0.4},
		{"server.energy_per_request <= 0.02Wh", with, Pass, 52}, // 72 J
		{"server.energy_per_request <= 0.01Wh", with, Fail, 52}, // 36 J
		{"server.energy < 6kJ", with, Pass, 5200},
		{"server.gpu_utilization > 50%", with, Pass, 0.75},
		{"server.gpu_power < 600", with, Pass, 520},
		{"phase[c8].server.energy_per_token < 0.5J", with, Fail, 0.9},
		{"server.energy_per_token < 0.5J", report.Summary{}, Error, 0},
	}
	for _, tt := range tests {
		rs := mustParse(t, tt.expr).Evaluate(tt.s, nil)
		if len(rs) != 1 || rs[0].Status != tt.status || (tt.status != Error && !close(rs[0].Value, tt.value)) {
			t.Errorf("%s: %+v, want %s at %v", tt.expr, rs, tt.status, tt.value)
		}
	}
	rs := mustParse(t, "server.energy_per_token < 0.5J").Evaluate(report.Summary{}, nil)
	if !strings.Contains(rs[0].Reason, "no GPU telemetry") {
		t.Errorf("absent reason %q", rs[0].Reason)
	}
	for expr, want := range map[string]string{
		"server.energy_per_token < 0.5":   "is an energy: give a unit (0.5J",
		"server.energy_per_token < 0.5ms": `"ms" is not an energy unit`,
		"server.energy_per_token < 0.5kg": `unknown unit "kg"`,
		"client.ttft.p99 < 5J":            `"J" is not a time unit`,
	} {
		if _, err := Parse(expr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", expr, err, want)
		}
	}
}
