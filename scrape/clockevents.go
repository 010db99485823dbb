package scrape

import "strconv"

// clockEventBits are NVML's clock-event reasons (nvmlClocksEventReason*),
// the bits of DCGM_FI_DEV_CLOCKS_EVENT_REASONS, in bit order.
var clockEventBits = []struct {
	bit  uint64
	name string
}{
	{0x1, "gpu_idle"}, {0x2, "applications_clocks_setting"}, {0x4, "sw_power_cap"},
	{0x8, "hw_slowdown"}, {0x10, "sync_boost"}, {0x20, "sw_thermal_slowdown"},
	{0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake_slowdown"}, {0x100, "display_clock_setting"},
}

// ThrottleReasons are the clock-event bits that slow a busy GPU down: the
// software power cap, hardware slowdown, software and hardware thermal
// slowdown, and the power brake. Idle, the applications' clock setting,
// sync boost and the display clock are not throttling.
const ThrottleReasons = 0x4 | 0x8 | 0x20 | 0x40 | 0x80

// ClockEventNames names the reasons set in a clock-event bitmask, in bit
// order; bits NVML does not define are named by their value.
func ClockEventNames(mask uint64) []string {
	var out []string
	known := uint64(0)
	for _, b := range clockEventBits {
		known |= b.bit
		if mask&b.bit != 0 {
			out = append(out, b.name)
		}
	}
	if rest := mask &^ known; rest != 0 {
		out = append(out, "0x"+strconv.FormatUint(rest, 16))
	}
	return out
}
