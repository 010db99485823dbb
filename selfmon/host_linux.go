package selfmon

import (
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of /proc/stat and /proc/self/stat: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// hostCPU reads the CPU-seconds the whole machine spent busy (steal included:
// a hypervisor that took the cores is a neighbour too), the CPU-seconds this
// process used, counted in the same ticks so the difference is the other
// processes', and the machine's online CPUs.
func hostCPU() (busy, self float64, cores int, ok bool) {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	for line := range strings.Lines(string(stat)) {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "cpu":
			// user nice system idle iowait irq softirq steal ...
			for i, v := range f[1:] {
				x, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return 0, 0, 0, false
				}
				if i != 3 && i != 4 && i < 8 { // not idle, not iowait, not guest (already in user)
					busy += x
				}
			}
		case len(f) > 0 && strings.HasPrefix(f[0], "cpu"):
			cores++
		}
	}
	own, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	// The command name (field 2) may hold spaces; fields count from after it.
	s := string(own)
	rest := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(rest) < 13 {
		return 0, 0, 0, false
	}
	utime, err1 := strconv.ParseFloat(rest[11], 64)
	stime, err2 := strconv.ParseFloat(rest[12], 64)
	if err1 != nil || err2 != nil || cores == 0 {
		return 0, 0, 0, false
	}
	return busy / clockTicks, (utime + stime) / clockTicks, cores, true
}

// cgroupSample reads the process's cgroup CPU throttling (cgroup.go).
func cgroupSample() (cgroupCPU, bool) {
	procCgroup, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return cgroupCPU{}, false
	}
	return readCgroupCPU("/sys/fs/cgroup", procCgroup)
}
