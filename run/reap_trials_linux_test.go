package run

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/launch"
)

// TestReapLeftoversLooksIntoTrialSets: the engines a llmbench killed
// outright left behind are found in runs, in the trials of trial sets and
// in those of A/B pairs, and killed; a group file anywhere else is no run's
// and is left alone.
func TestReapLeftoversLooksIntoTrialSets(t *testing.T) {
	t.Parallel()
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Skip("no boot id:", err)
	}
	runs := t.TempDir()
	// leftover starts an engine stand-in in its own group and writes its
	// GroupFile in runs/dir, owned by a llmbench that is gone (no process
	// has pid 999999998).
	leftover := func(dir string) *exec.Cmd {
		engine := exec.Command("sleep", "120")
		engine.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := engine.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = engine.Process.Kill(); _ = engine.Wait() })
		start, comm := procIdentity(t, engine.Process.Pid)
		content := fmt.Sprintf("%d\nboot_id %s\nstart %s\ncommand %s\nowner 999999998 1\n",
			engine.Process.Pid, strings.TrimSpace(string(boot)), start, comm)
		if err := os.MkdirAll(filepath.Join(runs, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(runs, dir, launch.GroupFile), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return engine
	}
	looked := map[string]*exec.Cmd{}
	for _, d := range []string{"run", filepath.Join("set", "trial-1"), filepath.Join("pair", "B", "trial-2")} {
		looked[d] = leftover(d)
	}
	spared := leftover(filepath.Join("a", "b", "c", "d"))
	exited := make(chan struct{}, len(looked))
	for _, e := range looked {
		go func() { _ = e.Wait(); exited <- struct{}{} }()
	}
	var log bytes.Buffer
	reapLeftovers(runs, &log)
	for range looked {
		select {
		case <-exited:
		case <-time.After(time.Minute):
			t.Fatalf("an engine left in a run, trial or pair lives on; log: %s", log.String())
		}
	}
	for d := range looked {
		if _, err := os.Stat(filepath.Join(runs, d, launch.GroupFile)); !os.IsNotExist(err) {
			t.Errorf("%s: the group file is still there (stat: %v)", d, err)
		}
	}
	if err := syscall.Kill(spared.Process.Pid, 0); err != nil {
		t.Errorf("the engine under a directory that is no run of a set was killed: %v", err)
	}
}
