package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/internal/realtest"
	"github.com/llmbench-org/llmbench/rundir"
)

// A hang-up (the ssh session closed) stops a run the way Ctrl-C does:
// arrivals stop, the requests in flight finish, and the run directory gets
// its records and summary. It used to end the process at once.
func TestRunStopsGracefullyOnHangUp(t *testing.T) {
	t.Parallel()
	runs := t.TempDir()
	sc := writeScenario(t, "name: hup\nengine: {kind: sim, preset: tiny, process: inline}\nworkload: {concurrency: 2, duration: 60s, prompt_tokens: 16, output_tokens: 64}\n")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := llmbenchProcess(ctx, "run", "--runs", runs, "--output", "plain", sc)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until requests are measured, then hang up.
	realtest.WaitFor(t, 60*time.Second, "records in the run directory", func() bool {
		m, _ := filepath.Glob(filepath.Join(runs, "*", rundir.RequestsFile))
		if len(m) == 0 {
			return false
		}
		st, err := os.Stat(m[0])
		return err == nil && st.Size() > 0
	})
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the run did not end after SIGHUP: %s", stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("the run died of %v instead of stopping: %v\n%s", ws.Signal(), err, stderr.String())
	}
	summaries, _ := filepath.Glob(filepath.Join(runs, "*", rundir.SummaryFile))
	if len(summaries) != 1 {
		t.Fatalf("no summary after SIGHUP (%v):\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "stopping arrivals") {
		t.Errorf("the run did not say it was stopping:\n%s", stderr.String())
	}
}

// A command other than run — here inspect, waiting on a server that
// accepts and never answers — stops on SIGTERM instead of ignoring it.
func TestEveryCommandStopsOnASignal(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	connected := make(chan struct{})
	go func() {
		for n := 0; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if n == 0 {
				close(connected)
			}
			defer c.Close() // held open, never answered
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := llmbenchProcess(ctx, "inspect", "http://"+ln.Addr().String()+"/metrics")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The signal goes once inspect has connected, which it does after main
	// set up its signal handling: a SIGTERM before that ends the process by
	// the default action (beside two CPU hogs under -race, 300 ms after the
	// start was before it, and the test saw "signal: terminated").
	select {
	case <-connected:
	case <-ctx.Done():
		t.Fatalf("inspect did not connect within a minute:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("inspect ignored SIGTERM:\n%s", stderr.String())
	}
	if err == nil || !strings.Contains(stderr.String(), "terminated: stopping") {
		t.Errorf("inspect after SIGTERM: %v; stderr:\n%s", err, stderr.String())
	}
}
