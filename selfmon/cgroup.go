package selfmon

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

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

// readCgroupCPU reads the counters of the cgroup named in procCgroup (the
// text of /proc/self/cgroup) under root (/sys/fs/cgroup): cgroup v2's
// cpu.stat (throttled_usec) and cpu.max, or v1's cpu controller
// (throttled_time in ns, cpu.cfs_quota_us and cpu.cfs_period_us). Inside a
// container with its own cgroup namespace the path is "/", so the
// controller's root directory is tried after the named one.
func readCgroupCPU(root string, procCgroup []byte) (cgroupCPU, bool) {
	for _, dir := range cgroupCPUDirs(root, procCgroup) {
		stat, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
		if err != nil {
			continue
		}
		var c cgroupCPU
		var ok bool
		sc := bufio.NewScanner(bytes.NewReader(stat))
		for sc.Scan() {
			key, val, _ := strings.Cut(sc.Text(), " ")
			n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
			if err != nil {
				continue
			}
			switch key {
			case "nr_throttled":
				c.throttledPeriods, ok = n, true
			case "throttled_usec": // v2
				c.throttled = time.Duration(n) * time.Microsecond
			case "throttled_time": // v1, ns
				c.throttled = time.Duration(n)
			}
		}
		if !ok {
			continue // a cpu.stat without CFS counters (v2 with the cpu controller off)
		}
		c.quota = cgroupQuota(dir)
		return c, true
	}
	return cgroupCPU{}, false
}

// cgroupCPUDirs lists the directories that may hold the process's CPU
// controller files, the most specific first.
func cgroupCPUDirs(root string, procCgroup []byte) []string {
	var dirs []string
	for line := range strings.Lines(string(procCgroup)) {
		// hierarchy-ID:controller-list:path
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "": // v2
			dirs = append(dirs, filepath.Join(root, f[2]), root)
		case hasController(f[1], "cpu"): // v1: mounted under the list's name
			for _, mount := range []string{f[1], "cpu,cpuacct", "cpu"} {
				dirs = append(dirs, filepath.Join(root, mount, f[2]), filepath.Join(root, mount))
			}
		}
	}
	return dirs
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// cgroupQuota reads the CPU limit in cores (0 for none): v2's cpu.max
// ("max 100000" or "150000 100000"), else v1's quota and period.
func cgroupQuota(dir string) float64 {
	if b, err := os.ReadFile(filepath.Join(dir, "cpu.max")); err == nil {
		q, p, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		return ratio(q, p)
	}
	q, err1 := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
	p, err2 := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil {
		return 0
	}
	return ratio(strings.TrimSpace(string(q)), strings.TrimSpace(string(p)))
}

// ratio is quota ÷ period, 0 when the quota is "max", -1 or unreadable.
func ratio(quota, period string) float64 {
	q, err1 := strconv.ParseFloat(quota, 64)
	p, err2 := strconv.ParseFloat(period, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0
	}
	return q / p
}
