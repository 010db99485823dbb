package selfmon

import "github.com/prometheus/procfs"

// hostCPU reads the CPU-seconds the whole machine spent busy (steal included:
// a hypervisor that took the cores is a neighbour too), the CPU-seconds this
// process used, counted in the same ticks (procfs turns both into seconds
// from USER_HZ) so the difference is the other processes', and the machine's
// online CPUs.
func hostCPU() (busy, self float64, cores int, ok bool) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, 0, 0, false
	}
	proc, err := fs.Self()
	if err != nil {
		return 0, 0, 0, false
	}
	return hostCPUOf(fs, proc)
}

// hostCPUOf is hostCPU read from fs (/proc/stat) and proc (/proc/PID/stat).
func hostCPUOf(fs procfs.FS, proc procfs.Proc) (busy, self float64, cores int, ok bool) {
	stat, err := fs.Stat()
	if err != nil || len(stat.CPU) == 0 {
		return 0, 0, 0, false
	}
	own, err := proc.Stat()
	if err != nil {
		return 0, 0, 0, false
	}
	// Not idle, not iowait, not guest (already counted in user).
	t := stat.CPUTotal
	busy = t.User + t.Nice + t.System + t.IRQ + t.SoftIRQ + t.Steal
	return busy, own.CPUTime(), len(stat.CPU), true
}
