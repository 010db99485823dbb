package main

import (
	"context"
	"os"
	"os/signal"
	"testing"

	"golang.org/x/term"
)

// envAsCLI makes the test binary behave as the llmbench command itself, so a
// test can launch "llmbench serve" as a real child process (engine kind
// launch) without building the binary first.
const envAsCLI = "LLMBENCH_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(envAsCLI) == "1" {
		ignoreBrokenPipe()
		sigs := make(chan os.Signal, 2)
		signal.Notify(sigs, stopSignals...)
		cio := &cliIO{stdout: os.Stdout, stderr: os.Stderr, isTTY: term.IsTerminal(int(os.Stdout.Fd())), signals: sigs, getenv: os.Getenv, exit: os.Exit}
		args := os.Args[1:]
		// Drop the test framework's flags, which come first.
		for len(args) > 0 && len(args[0]) > 6 && args[0][:6] == "-test." {
			args = args[1:]
		}
		os.Exit(execute(context.Background(), cio, args))
	}
	// The built-in engine runs as `llmbench serve` in a child process: here
	// that child is this test binary, acting as the command (testIO sets
	// envAsCLI for it).
	os.Exit(m.Run())
}
