package run

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/llmbench-org/llmbench/engine/launch"
)

// procIdentity reads a process's start time and name from /proc/PID/stat,
// as a GroupFile records them.
func procIdentity(t *testing.T, pid int) (start, comm string) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	l, r := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	fields := strings.Fields(s[r+2:]) // from the state, field 3
	return fields[22-3], s[l+1 : r]
}

// Two runs share a runs directory (two CI jobs, two people): the second
// must not take the first one's engine for a leftover. The first run's
// GroupFile names a live engine group, every identity field right, and an
// owner that still runs (this test process): the second run leaves both the
// group and the file alone.
func TestRunSparesAnotherRunsEngine(t *testing.T) {
	t.Parallel()
	engine := exec.Command("sleep", "120")
	engine.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := engine.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = engine.Process.Kill(); _ = engine.Wait() })
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Skip("no boot id:", err)
	}
	start, comm := procIdentity(t, engine.Process.Pid)
	ownerStart, _ := procIdentity(t, os.Getpid())

	runs := t.TempDir()
	first := filepath.Join(runs, "20260101T000000Z-running")
	if err := os.MkdirAll(first, 0o755); err != nil {
		t.Fatal(err)
	}
	group := filepath.Join(first, launch.GroupFile)
	content := fmt.Sprintf("%d\nboot_id %s\nstart %s\ncommand %s\nowner %d %s\n",
		engine.Process.Pid, strings.TrimSpace(string(boot)), start, comm, os.Getpid(), ownerStart)
	if err := os.WriteFile(group, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	path := writeScenario(t, "name: second\nengine: {kind: sim, preset: tiny, process: inline}\nworkload: {concurrency: 1, requests: 2, prompt_tokens: 8, output_tokens: 4}\n")
	if _, err := Run(t.Context(), Config{Scenario: path, RunsDir: runs}, IO{}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(engine.Process.Pid, 0); err != nil {
		t.Fatalf("the first run's engine was killed by the second run: %v", err)
	}
	if b, err := os.ReadFile(group); err != nil || string(b) != content {
		t.Errorf("the first run's group file was touched: %q, %v", b, err)
	}
}
