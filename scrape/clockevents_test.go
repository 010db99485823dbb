package scrape

import (
	"slices"
	"testing"
)

func TestClockEventNames(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mask uint64
		want []string
	}{
		{0, nil},
		{1, []string{"gpu_idle"}},
		{ThrottleReasons, []string{"sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"}},
		{0x10 | 0x100, []string{"sync_boost", "display_clock_setting"}},
		{0x2 | 0x1000, []string{"applications_clocks_setting", "0x1000"}},
	} {
		if got := ClockEventNames(tt.mask); !slices.Equal(got, tt.want) {
			t.Errorf("%#x: %q, want %q", tt.mask, got, tt.want)
		}
	}
}
