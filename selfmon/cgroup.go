package selfmon

import "time"

// cgroupCPU is the CPU controller's account of the cgroup the process runs
// in (a container's, a Kubernetes pod's): how often the CFS quota stopped
// it and for how long. A throttled cgroup is paused, every thread at once,
// until the next period (100 ms by default): timestamps taken then are late
// by up to that, and neither the Go scheduler's delay (no goroutine was
// runnable-and-waiting inside the process's view) nor the host's idle share
// (the cores may be idle) shows it.
type cgroupCPU struct {
	throttledPeriods int64
	throttled        time.Duration
	quota            float64 // cores per period; 0: no limit
}
