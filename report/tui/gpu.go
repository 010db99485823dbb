package tui

import (
	"fmt"
	"strings"

	"github.com/llmbench-org/llmbench/live"
)

// gpuValue is the GPU row's figure: the GPUs' utilisation now.
func gpuValue(g live.GPULive) string {
	if !g.HasUtil {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", 100*g.Utilization)
}

// gpuDetail is the rest of the GPU row: power, a token's energy over the
// window, and the GPUs throttled now.
func gpuDetail(g live.GPULive) string {
	var parts []string
	if g.HasPower {
		parts = append(parts, fmt.Sprintf("%.0f W on %d GPUs", g.PowerW, g.GPUs))
	}
	if g.HasEnergyPerToken {
		parts = append(parts, fmt.Sprintf("%.3g J per output token", g.EnergyPerTokenJ))
	}
	if g.Throttled > 0 {
		parts = append(parts, fmt.Sprintf("%d throttled", g.Throttled))
	}
	return strings.Join(parts, " · ")
}
