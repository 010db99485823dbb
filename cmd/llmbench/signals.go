package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// stopSignals are the signals every command stops on, gracefully: Ctrl-C,
// a kill, and a hang-up (a closed ssh session), which used to end a run at
// once with no summary and no records for the requests in flight.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// ownsSignals: the commands that read cio.signals themselves — run's
// two-stage stop (finish in-flight requests, then abort them), and serve,
// which drains its streams.
func ownsSignals(cmd *cobra.Command) bool {
	switch cmd.Name() {
	case "run", "serve":
		return true
	}
	return false
}

// errInterrupted is the cause a command's context is cancelled with when a
// signal arrives.
var errInterrupted = errors.New("interrupted")

// exitGrace is how long a command other than run and serve has after a
// signal to return on its own (its context is cancelled) before the
// process exits: one blocked in a read that no context reaches must not
// ignore Ctrl-C. Everything such a command writes goes through the atomic
// writer, so nothing half-written is left.
const exitGrace = 2 * time.Second

// stopOnSignal cancels a command's context on the first signal, says so,
// and exits the process if the command has not returned within exitGrace
// (cio.exit; tests leave it nil and read the cancellation).
func (c *cliIO) stopOnSignal(ctx context.Context, cancel context.CancelCauseFunc, done <-chan struct{}) {
	var sig os.Signal
	select {
	case <-done:
		return
	case <-ctx.Done():
		return
	case s, ok := <-c.signals:
		if !ok {
			return
		}
		sig = s
	}
	fmt.Fprintf(c.stderr, "llmbench: %v: stopping\n", sig)
	cancel(errInterrupted)
	if c.exit == nil {
		return
	}
	select {
	case <-done:
	case <-time.After(exitGrace):
		c.exit(128 + signalNumber(sig))
	}
}

// signalNumber is a signal's number for the shell's 128+n exit status.
func signalNumber(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return int(s)
	}
	return int(syscall.SIGINT)
}
