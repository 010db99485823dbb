package run

import (
	"fmt"
	"os"
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
	return sim.ServeArgs(args[1:], os.Stdout, os.Stderr)
}
