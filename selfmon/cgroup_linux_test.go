package selfmon

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// The cgroup files as the kernel writes them (cgroup v2's cpu.stat and
// cpu.max, v1's cpu.stat, quota and period), laid out as under
// /sys/fs/cgroup, and the process's /proc/PID/cgroup naming its group.
func TestReadCgroupCPU(t *testing.T) {
	t.Parallel()
	const v2Stat = "usage_usec 8123456\nuser_usec 6000000\nsystem_usec 2123456\nnr_periods 410\nnr_throttled 37\nthrottled_usec 1234567\nnr_bursts 0\nburst_usec 0\n"
	const v1Stat = "nr_periods 410\nnr_throttled 5\nthrottled_time 250000000\n"
	for _, tc := range []struct {
		name       string
		procCgroup string
		files      map[string]string // path under root → content
		want       cgroupCPU
		ok         bool
	}{
		{"v2 pod with a limit", "0::/kubepods/burstable/pod1/abc\n",
			map[string]string{"kubepods/burstable/pod1/abc/cpu.stat": v2Stat, "kubepods/burstable/pod1/abc/cpu.max": "150000 100000\n"},
			cgroupCPU{throttledPeriods: 37, throttled: 1234567 * time.Microsecond, quota: 1.5}, true},
		{"v2 namespace root, no limit", "0::/\n",
			map[string]string{"cpu.stat": v2Stat, "cpu.max": "max 100000\n"},
			cgroupCPU{throttledPeriods: 37, throttled: 1234567 * time.Microsecond}, true},
		{"v2 path not visible: the namespace root", "0::/outside/view\n",
			map[string]string{"cpu.stat": v2Stat, "cpu.max": "200000 100000\n"},
			cgroupCPU{throttledPeriods: 37, throttled: 1234567 * time.Microsecond, quota: 2}, true},
		{"v2 without the cpu controller", "0::/\n",
			map[string]string{"cpu.stat": "usage_usec 10\nuser_usec 5\nsystem_usec 5\n"}, cgroupCPU{}, false},
		{"v1 cpu,cpuacct", "12:memory:/docker/x\n4:cpu,cpuacct:/docker/x\n1:name=systemd:/docker/x\n",
			map[string]string{"cpu,cpuacct/docker/x/cpu.stat": v1Stat, "cpu,cpuacct/docker/x/cpu.cfs_quota_us": "50000\n",
				"cpu,cpuacct/docker/x/cpu.cfs_period_us": "100000\n"},
			cgroupCPU{throttledPeriods: 5, throttled: 250 * time.Millisecond, quota: 0.5}, true},
		{"v1 no quota", "2:cpu:/\n",
			map[string]string{"cpu/cpu.stat": v1Stat, "cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"},
			cgroupCPU{throttledPeriods: 5, throttled: 250 * time.Millisecond}, true},
		{"nothing mounted", "0::/\n", nil, cgroupCPU{}, false},
		{"garbage", "not a cgroup line\n::\n", map[string]string{"cpu.stat": "nr_throttled x\n"}, cgroupCPU{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			proc := procWith(t, map[string]string{"1/cgroup": tc.procCgroup}).proc(t, 1)
			for path, content := range tc.files {
				p := filepath.Join(root, path)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := readCgroupCPU(root, proc)
			if ok != tc.ok || got != tc.want {
				t.Errorf("readCgroupCPU = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// procFS is a /proc laid out in a temporary directory, read through procfs.
type procFS struct{ fs procfs.FS }

// procWith writes files (path under /proc → content) and mounts them.
func procWith(t *testing.T, files map[string]string) procFS {
	t.Helper()
	root := filepath.Join(t.TempDir(), "proc")
	for path, content := range files {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	fs, err := procfs.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	return procFS{fs}
}

func (p procFS) proc(t *testing.T, pid int) procfs.Proc {
	t.Helper()
	proc, err := p.fs.Proc(pid)
	if err != nil {
		t.Fatal(err)
	}
	return proc
}
