package run_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/llmbench-org/llmbench/run"
)

// A Go program runs a scenario without the command line: against the
// built-in engine here, and reads a number from the result.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "llmbench-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	scenario := filepath.Join(dir, "example.yaml")
	err = os.WriteFile(scenario, []byte(`
name: example
engine: {kind: sim, preset: tiny}
workload: {concurrency: 4, requests: 20, prompt_tokens: 32, output_tokens: 8}
`), 0o644)
	if err != nil {
		fmt.Println(err)
		return
	}
	// run.IO{} prints nothing and runs the built-in engine in this process:
	// the summary comes back as a value, and the run directory under dir
	// holds every file a run writes.
	res, err := run.Run(context.Background(), run.Config{Scenario: scenario, RunsDir: dir}, run.IO{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("requests ok:", res.Summary.Client.Requests.OK)
	// Output: requests ok: 20
}
