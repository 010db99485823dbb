package selfmon

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// cgroupSample reads the process's cgroup CPU throttling.
func cgroupSample() (cgroupCPU, bool) {
	self, err := procfs.Self()
	if err != nil {
		return cgroupCPU{}, false
	}
	return readCgroupCPU("/sys/fs/cgroup", self)
}

// readCgroupCPU reads the counters of proc's cgroup (procfs reads which
// one from /proc/PID/cgroup) under root (/sys/fs/cgroup): cgroup v2's
// cpu.stat (throttled_usec) and cpu.max, or v1's cpu controller
// (throttled_time in ns, cpu.cfs_quota_us and cpu.cfs_period_us). Inside a
// container with its own cgroup namespace the path is "/", so the
// controller's root directory is tried after the named one. The controller
// files are read here: procfs reads /proc, not the cgroup file system
// (decision 0023).
func readCgroupCPU(root string, proc procfs.Proc) (cgroupCPU, bool) {
	groups, err := proc.Cgroups()
	if err != nil {
		return cgroupCPU{}, false
	}
	for _, dir := range cgroupCPUDirs(root, groups) {
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
func cgroupCPUDirs(root string, groups []procfs.Cgroup) []string {
	var dirs []string
	for _, g := range groups {
		switch {
		case g.HierarchyID == 0 && len(g.Controllers) == 0: // v2
			dirs = append(dirs, filepath.Join(root, g.Path), root)
		case slices.Contains(g.Controllers, "cpu"): // v1: mounted under the list's name
			for _, mount := range []string{strings.Join(g.Controllers, ","), "cpu,cpuacct", "cpu"} {
				dirs = append(dirs, filepath.Join(root, mount, g.Path), filepath.Join(root, mount))
			}
		}
	}
	return dirs
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
