package launch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// An llmbench killed outright (SIGKILL, a test binary's crash) takes its
// engine with it: no orphan keeps the GPU.
func TestEngineDiesWithLlmbench(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "engine.pid")
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"="+pidFile)
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; {
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
			fmt.Sscan(string(b), &pid)
		}
		if time.Now().After(deadline) {
			_ = helper.Process.Kill()
			_ = helper.Wait()
			t.Fatal("the helper's engine never wrote its pid")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if processGone(t, pid) {
		t.Fatalf("engine %d is not running before its llmbench is killed", pid)
	}
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	if !waitGoneWithin(t, pid, 10*time.Second) {
		t.Errorf("engine %d outlived its killed llmbench", pid)
	}
}
