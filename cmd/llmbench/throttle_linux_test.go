package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// TestThrottledClientSaysSo runs llmbench in a real cgroup whose CPU limit is
// a fifth of a core, as a Kubernetes pod with a small CPU limit would, and
// checks that the run blames the limit (client_health.delay cpu_throttled,
// the quota, the throttled time, a problem saying what to do), live as well
// as in the summary. It needs
// root and a writable cgroup CPU controller (v1 or v2); it skips without.
func TestThrottledClientSaysSo(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of a few seconds")
	}
	const quota = 0.2
	procs := cpuLimitedCgroup(t, quota)
	// The premise is a client that wants more CPU than its limit in every
	// period, whatever else the machine runs. 16 streams of the tiny preset
	// want about 0.18 cores, at the limit: alone it was stopped in 14 of the
	// 50 periods of 5 s, and beside two CPU hogs in 3 (120 ms), so the live
	// view's one-second looks said "other processes took its cores" in the
	// seconds between, truly (the limit had not stopped it then), and never
	// two throttled looks in a row. 64 streams want about three times the
	// limit: stopped in 43–51 of 50 periods beside the hogs, every look
	// throttled.
	scenarioText := `
name: throttled
engine: {kind: sim, preset: tiny, process: inline}
workload: {concurrency: 64, duration: 5s, prompt_tokens: 64, output_tokens: 64}
`
	dir := t.TempDir()
	scenario := filepath.Join(dir, "throttled.yaml")
	if err := os.WriteFile(scenario, []byte(scenarioText), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(dir, "runs")
	// The shell moves itself into the cgroup, then becomes llmbench.
	cmd := exec.Command("sh", "-c", `echo $$ > "$1" && exec "$2" run "$3" --runs "$4" --output plain`,
		"sh", procs, testBinary()[0], scenario, runs)
	cmd.Env = append(os.Environ(), envAsCLI+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("llmbench run in the cgroup: %v\n%s", err, out)
	}
	paths, _ := filepath.Glob(filepath.Join(runs, "*", rundir.SummaryFile))
	if len(paths) != 1 {
		t.Fatalf("summaries %v\n%s", paths, out)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var s report.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	c := s.Health.Client
	if c.Delay != "cpu_throttled" || c.ThrottledPeriods == 0 || c.Throttled_s <= 0 || c.CPUQuota == nil || math.Abs(*c.CPUQuota-quota) > 1e-9 {
		t.Errorf("client health %+v (quota %v), want cpu_throttled with the quota %g", c, c.CPUQuota, quota)
	}
	if s.Health.Valid || !strings.Contains(strings.Join(s.Health.Problems, "\n"), "CPU limit of llmbench's container (0.2 cores) stopped the client") {
		t.Errorf("problems %q, want the limit named", s.Health.Problems)
	}
	if !strings.Contains(string(out), "CPU limit") {
		t.Errorf("the printed summary does not name the CPU limit:\n%s", out)
	}
	// The live lines said it while the run went on, not only at the end.
	if !strings.Contains(string(out), "WARN client: its container's CPU limit (0.2 cores) stopped it") {
		t.Errorf("no live line warned of the CPU limit:\n%s", out)
	}
	t.Logf("throttled %d times, %.0f ms, at %.0f%% of %d cores", c.ThrottledPeriods, 1000*c.Throttled_s, 100*c.CPUUtilization, c.CPUCores)
}

// cpuLimitedCgroup creates a cgroup limited to quota cores (removed when the
// test ends) and returns the file a process writes its pid into to join it.
// Its weight is the largest the kernel takes: the quota stops llmbench only
// if the kernel gives it CPU up to the quota, and on a busy machine (two CPU
// hogs beside go test, under nice) a cgroup of the default weight got less
// than that in some periods (throttled 18 times in a 5-s run against 48
// alone), so whether it was throttled was the neighbours' doing. With the
// weight, it gets its quota whenever it wants it, on any machine.
func cpuLimitedCgroup(t *testing.T, quota float64) string {
	t.Helper()
	name := fmt.Sprintf("llmbench-test-%d", os.Getpid())
	const period = 100000 // µs, the kernel's default
	limit := int(quota * period)
	try := func(dir string, files map[string]string) (string, error) {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", err
		}
		t.Cleanup(func() { _ = os.Remove(dir) }) // once its processes are gone
		for f, v := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
				return "", err
			}
		}
		return filepath.Join(dir, "cgroup.procs"), nil
	}
	var why []string
	if _, err := os.Stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"); err == nil { // v1
		procs, err := try(filepath.Join("/sys/fs/cgroup/cpu", name), map[string]string{
			"cpu.cfs_period_us": fmt.Sprint(period), "cpu.cfs_quota_us": fmt.Sprint(limit), "cpu.shares": "262144"})
		if err == nil {
			return procs
		}
		why = append(why, "v1: "+err.Error())
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control"); err == nil && strings.Contains(string(b), "cpu") { // v2
		procs, err := try(filepath.Join("/sys/fs/cgroup", name), map[string]string{"cpu.max": fmt.Sprintf("%d %d", limit, period), "cpu.weight": "10000"})
		if err == nil {
			return procs
		}
		why = append(why, "v2: "+err.Error())
	}
	t.Skipf("no writable cgroup CPU controller here (%s)", strings.Join(why, "; "))
	return ""
}
