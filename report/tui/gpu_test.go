package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/llmbench-org/llmbench/live"
)

// TestGPURow: with GPU telemetry the load pane shows the GPUs'
// utilisation, power, a token's energy and the throttled ones; without it,
// no GPU row.
func TestGPURow(t *testing.T) {
	t.Parallel()
	m := fed(t, newModel(quickstart, nil), 64)
	if v := ansi.Strip(m.render()); strings.Contains(v, "GPU util") {
		t.Errorf("a run without GPU telemetry shows a GPU row:\n%s", v)
	}
	m.last.GPU = live.GPULive{Has: true, GPUs: 2, PowerW: 712, HasPower: true, Utilization: 0.85, HasUtil: true,
		EnergyPerTokenJ: 0.523, HasEnergyPerToken: true, Throttled: 1}
	v := ansi.Strip(m.render())
	for _, want := range []string{"GPU util", "85%", "712 W on 2 GPUs · 0.523 J per output token"} {
		if !strings.Contains(v, want) {
			t.Errorf("the view lacks %q:\n%s", want, v)
		}
	}
}
