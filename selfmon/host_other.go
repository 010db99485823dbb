//go:build !linux

package selfmon

// hostCPU is not measured off Linux: Report.HostMeasured says so.
func hostCPU() (busy, self float64, cores int, ok bool) { return 0, 0, 0, false }

// cgroupSample is not measured off Linux (there are no cgroups).
func cgroupSample() (cgroupCPU, bool) { return cgroupCPU{}, false }
