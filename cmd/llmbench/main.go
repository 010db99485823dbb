// Command llmbench drives streaming chat load at an LLM serving engine, scrapes
// the engine's own metrics all along, and reports both views side by side.
//
// This package only parses flags, picks the live view, turns signals into
// stops and outcomes into exit codes; the run itself is the run package's.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/llmbench-org/llmbench/internal/sigstop"
	"github.com/llmbench-org/llmbench/internal/version"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/run"
)

// Exit codes.
const (
	exitOK      = 0
	exitRuntime = 1 // the run could not be carried out
	exitUsage   = 2 // bad flags, arguments or scenario file
	exitGate    = 3 // the run worked, but a gate failed or could not be evaluated
	// exitInconclusive: no gate failed, but some could not be decided from
	// the evidence (too few requests or runs, a run not valid, a delayed
	// host); a fail dominates it.
	exitInconclusive = 4
)

// usageError marks a bad command line or input: the user's to fix, exit 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// exitCode maps an error returned by a command to the process's exit code,
// by the error's type.
func exitCode(err error) int {
	var (
		usage  usageError
		config *run.ConfigError
		gate   *run.GatesFailed
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &usage), errors.As(err, &config):
		return exitUsage
	case errors.As(err, &gate):
		if !gate.Decisive() && gate.Inconclusive > 0 {
			return exitInconclusive
		}
		return exitGate
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
	self           []string // runs llmbench itself: its own executable
	selfEnv        []string // added to llmbench's own child processes (tests make the test binary act as llmbench)
	// exit ends the process when a command other than run and serve does
	// not return soon after a signal (os.Exit; nil in tests).
	exit func(code int)
}

// runIO is what a run gets of the outside world.
func (c *cliIO) runIO() run.IO {
	return run.IO{Stdout: c.stdout, Stderr: c.stderr, Getenv: c.getenv, Self: c.self, SelfEnv: c.selfEnv}
}

func newRootCmd(cio *cliIO) *cobra.Command {
	root := &cobra.Command{
		Use:           "llmbench",
		Short:         "Benchmark LLM serving engines: client timings beside the engine's own metrics",
		SilenceUsage:  true,
		SilenceErrors: true,
		// No Args: cobra's own check then reports an unknown command with
		// its suggestions ("Did you mean this?", within
		// SuggestionsMinimumDistance); execute makes it a usage error.
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		Version: version.String(),
	}
	root.SetVersionTemplate("llmbench {{.Version}}\n")
	root.SetOut(cio.stdout)
	root.SetErr(cio.stderr)
	// Flag errors are usage errors (exit 2).
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return asUsage(err) })
	root.AddCommand(newRunCmd(cio), newValidateCmd(), newPlanCmd(), newReportCmd(cio), newCompareCmd(cio), newABCmd(cio), newMergeCmd(cio), newGateCmd(cio), newNoiseCmd(cio), newServeCmd(), newInspectCmd(cio), newInitCmd(cio), newImportCmd(cio), newExportWorkloadCmd(cio), newVersionCmd(cio))
	typeArgErrors(root)
	return root
}

// typeArgErrors makes the argument checks of cmd and its subcommands return
// usage errors, so that a wrong number of arguments exits 2.
func typeArgErrors(cmd *cobra.Command) {
	if check := cmd.Args; check != nil {
		cmd.Args = func(c *cobra.Command, args []string) error { return asUsage(check(c, args)) }
	}
	for _, sub := range cmd.Commands() {
		typeArgErrors(sub)
	}
}

func main() {
	ignoreBrokenPipe()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignals...)
	cio := &cliIO{
		// stderr carries messages quoting the outside (the live view, on
		// stdout, writes its own escape sequences).
		stdin: os.Stdin, stdout: os.Stdout, stderr: redact.SafeWriter(os.Stderr),
		isTTY:   term.IsTerminal(int(os.Stdout.Fd())),
		signals: sigs,
		getenv:  os.Getenv,
		exit:    os.Exit,
	}
	// The built-in engine runs as `llmbench serve` in a child process (0005).
	if self, err := os.Executable(); err == nil {
		cio.self = []string{self}
	}
	os.Exit(execute(context.Background(), cio, os.Args[1:]))
}

// ignoreBrokenPipe keeps a closed stdout (`llmbench run … | head -2`) from
// killing llmbench mid-run: writes to it fail instead, and the run still
// writes its directory and summary.
func ignoreBrokenPipe() { signal.Ignore(syscall.SIGPIPE) }

// execute runs the command line args and returns the exit code.
func execute(ctx context.Context, cio *cliIO, args []string) int {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan struct{})
	defer close(done)
	root := newRootCmd(cio)
	// Every command stops on a signal: run and serve read them themselves,
	// the others through their context (and, if stuck, the process exits).
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) {
		if !ownsSignals(cmd) && cio.signals != nil {
			go sigstop.Watch(ctx, cancel, done, cio.signals, cio.stderr, cio.exit)
		}
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && errors.Is(context.Cause(ctx), errInterrupted) {
		err = fmt.Errorf("%w: %w", errInterrupted, err)
	}
	if err != nil && cmd == root {
		// The root command runs nothing but help, so its errors are the
		// command line's: an unknown command, which cobra returns untyped
		// (exit 2, not 1).
		err = asUsage(err)
	}
	if err != nil {
		fmt.Fprintf(cio.stderr, "llmbench: %v\n", err)
	}
	return exitCode(err)
}
