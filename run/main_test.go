package run

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/llmbench-org/llmbench/engine/sim"
)

// envAsCLI makes the test binary act as `llmbench serve`, so that a run can
// start the built-in engine in a child process (its default) from the test
// binary's own path, as it does from llmbench's.
const envAsCLI = "LLMBENCH_TEST_AS_CLI"

// testBinary runs this test binary, as IO.Self.
var testBinary []string

func TestMain(m *testing.M) {
	if os.Getenv(envAsCLI) == "1" {
		os.Exit(actAsServe(os.Args[1:]))
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testBinary = []string{self}
	os.Exit(m.Run())
}

// actAsServe is `llmbench serve` with the same flags.
func actAsServe(args []string) int {
	if len(args) == 0 || args[0] != "serve" {
		fmt.Fprintf(os.Stderr, "test binary as llmbench: only serve, not %q\n", args)
		return 2
	}
	var o sim.ServeOptions
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	o.Bind(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	cfg, err := o.Config()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	if err := sim.Serve(context.Background(), cfg, o.Grace, os.Stdout, sigs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
