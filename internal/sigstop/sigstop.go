// Package sigstop is how a command other than `run` and `serve` stops on a
// signal: its context is cancelled, and if it does not return soon after,
// the process exits (one blocked in a read no context reaches must not
// ignore Ctrl-C).
package sigstop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// Signals are the signals every command stops on, gracefully: Ctrl-C, a
// kill, and a hang-up (a closed ssh session), which used to end a run at
// once with no summary and no records for the requests in flight.
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// ErrInterrupted is the cause a command's context is cancelled with when a
// signal arrives.
var ErrInterrupted = errors.New("interrupted")

// Grace is how long a command has after a signal to return on its own
// (its context is cancelled) before the process exits. Everything such a
// command writes goes through the atomic writer, so nothing half-written is
// left.
const Grace = 2 * time.Second

// Watch cancels a command's context on the first signal from signals, says
// so on stderr, and calls exit(128+n) if the command has not returned (done
// closed) within Grace; a nil exit (tests) leaves it at the cancellation.
func Watch(ctx context.Context, cancel context.CancelCauseFunc, done <-chan struct{}, signals <-chan os.Signal, stderr io.Writer, exit func(int)) {
	var sig os.Signal
	select {
	case <-done:
		return
	case <-ctx.Done():
		return
	case s, ok := <-signals:
		if !ok {
			return
		}
		sig = s
	}
	fmt.Fprintf(stderr, "llmbench: %v: stopping\n", sig)
	cancel(ErrInterrupted)
	if exit == nil {
		return
	}
	select {
	case <-done:
	case <-time.After(Grace):
		exit(128 + Number(sig))
	}
}

// Number is a signal's number for the shell's 128+n exit status.
func Number(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return int(s)
	}
	return int(syscall.SIGINT)
}
