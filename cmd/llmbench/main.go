// Command llmbench drives streaming chat load at an LLM serving engine, scrapes
// the engine's own metrics all along, and reports both views side by side.
//
// This package only parses flags and wires packages together; the logic lives
// in the packages it imports.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Exit codes.
const (
	exitOK      = 0
	exitRuntime = 1 // the run could not be carried out
	exitUsage   = 2 // bad flags, arguments or scenario file
	// exitGate = 3 (a gate failed or could not be evaluated) is in gate.go.
)

// exitCoder is an error that knows its exit code.
type exitCoder interface{ ExitCode() int }

type codedError struct {
	code int
	err  error
}

func (e codedError) Error() string { return e.err.Error() }
func (e codedError) Unwrap() error { return e.err }
func (e codedError) ExitCode() int { return e.code }

// usageError marks err as the user's to fix: exit code 2.
func usageError(err error) error {
	if err == nil {
		return nil
	}
	return codedError{code: exitUsage, err: err}
}

// exitCode maps an error returned by a command to the process's exit code.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return exitRuntime
}

// cliIO is everything a command touches of the outside world, so tests can run
// whole commands: output streams, whether stdout is a terminal, signals.
type cliIO struct {
	stdin          io.Reader // nil: no keyboard (tests, pipes)
	stdout, stderr io.Writer
	isTTY          bool
	signals        <-chan os.Signal
	getenv         func(string) string
}

func newRootCmd(cio *cliIO) *cobra.Command {
	root := &cobra.Command{
		Use:           "llmbench",
		Short:         "Benchmark LLM serving engines: client timings beside the engine's own metrics",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(cio.stdout)
	root.SetErr(cio.stderr)
	// Flag and argument errors are usage errors (exit 2).
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	root.AddCommand(newRunCmd(cio), newValidateCmd(), newPlanCmd(), newReportCmd(cio), newCompareCmd(cio), newMergeCmd(cio), newGateCmd(cio), newServeCmd(), newInspectCmd(cio), newVersionCmd(cio))
	return root
}

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	cio := &cliIO{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		isTTY:   term.IsTerminal(int(os.Stdout.Fd())),
		signals: sigs,
		getenv:  os.Getenv,
	}
	os.Exit(execute(context.Background(), cio, os.Args[1:]))
}

// execute runs the command line args and returns the exit code.
func execute(ctx context.Context, cio *cliIO, args []string) int {
	root := newRootCmd(cio)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil {
		// cobra reports unknown commands and bad args as plain errors.
		if isCobraUsage(err) {
			err = usageError(err)
		}
		fmt.Fprintf(cio.stderr, "llmbench: %v\n", err)
	}
	return exitCode(err)
}

// isCobraUsage recognises the errors cobra itself returns for a bad command
// line (unknown command, wrong number of arguments), which carry no type.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, s := range []string{"unknown command", "arg(s)", "unknown flag", "unknown shorthand", "flag needs an argument", "invalid argument"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
