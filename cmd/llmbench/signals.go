package main

import (
	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/internal/sigstop"
)

// stopSignals are the signals every command stops on (package sigstop).
var stopSignals = sigstop.Signals

// errInterrupted is the cause a command's context is cancelled with when a
// signal arrives.
var errInterrupted = sigstop.ErrInterrupted

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
