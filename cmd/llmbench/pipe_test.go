//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/rundir"
)

// TestClosedStdoutDoesNotKillTheRun: `llmbench run … | head -2` closes
// stdout early; the run carries on and still writes its summary.
func TestClosedStdoutDoesNotKillTheRun(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	runs := t.TempDir()
	path := writeScenario(t, "name: piped\nengine: {kind: sim, preset: tiny}\nworkload: {concurrency: 2, requests: 40, prompt_tokens: 16, output_tokens: 16}\n")
	cmd := exec.Command(self, "run", "--output", "plain", "--runs", runs, path)
	cmd.Env = append(os.Environ(), envAsCLI+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Read nothing but close our end at once, as `head` does when done:
	// every write to stdout then meets a broken pipe.
	_ = bufio.NewReader(out)
	out.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("the run did not end")
	}
	if st := cmd.ProcessState; st != nil && !st.Exited() {
		t.Fatalf("llmbench died of a signal (%v): a closed stdout must not kill the run", st)
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "*", rundir.SummaryFile))
	if len(dirs) != 1 {
		t.Errorf("%d summaries written (exit: %v), want the run's one", len(dirs), err)
	}
}
