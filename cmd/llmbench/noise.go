package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/report/noise"
	"github.com/llmbench-org/llmbench/run"
)

func newNoiseCmd(cio *cliIO) *cobra.Command {
	var (
		pairs   int
		runsDir string
		out     string
		sets    []string
	)
	cmd := &cobra.Command{
		Use:   "noise SCENARIO.yaml",
		Short: "Learn this machine's noise floors: run A/A pairs of a scenario and record how far each metric's regression moves",
		Long: `Runs the scenario 2 × --pairs times, back to back, and records for each pair the regression of its
second run against its first in every client latency (mean, p50, p90, p99) and throughput: nothing
changed between them, so what moved is this machine's run-to-run noise. Each metric's floor is the
largest of those moves. The floors are written to the noise file (--out; default $LLMBENCH_NOISE,
else ~/.config/llmbench/noise.json) under the scenario's hash and this host, and llmbench gate and
llmbench compare widen a single run's regression by them (docs/decisions/0034). Learn them on the
machine the gates run on, with the load the gates see.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if pairs < 1 {
				return asUsage(errors.New("--pairs must be at least 1"))
			}
			if out == "" && cio.getenv != nil {
				out = noise.DefaultPath(cio.getenv)
			}
			if out == "" {
				return asUsage(errors.New("no noise file: give --out (no $LLMBENCH_NOISE, no home directory)"))
			}
			var got [][2]gates.Run
			var first string
			for i := range pairs {
				var pair [2]gates.Run
				for j := range pair {
					res, err := run.Run(cmd.Context(), run.Config{Scenario: args[0], Sets: sets, RunsDir: runsDir}, quietIO(cio))
					var gf *run.GatesFailed
					if err != nil && !errors.As(err, &gf) {
						return err
					}
					if first == "" {
						first = res.Dir
					}
					if pair[j], err = gates.LoadRun(res.Dir); err != nil {
						return err
					}
					fmt.Fprintf(cio.stdout, "pair %d/%d run %c: %s (valid: %v)\n", i+1, pairs, 'A'+j, res.Dir, pair[j].Summary.Health.Valid)
				}
				got = append(got, pair)
			}
			k, err := noise.KeyOf(first)
			if err != nil {
				return err
			}
			e, err := noise.Learn(k, got, noise.Metrics, time.Now())
			if err != nil {
				return err
			}
			f, err := noise.Load(out)
			if err != nil {
				return err
			}
			f.Put(e)
			if err := f.Save(out); err != nil {
				return err
			}
			return printFloors(cio.stdout, out, e)
		},
	}
	cmd.Flags().IntVar(&pairs, "pairs", 10, "A/A pairs to run")
	cmd.Flags().StringVar(&runsDir, "runs", "runs", "directory under which the run directories are created")
	cmd.Flags().StringVar(&out, "out", "", "noise file to write (default: $LLMBENCH_NOISE or ~/.config/llmbench/noise.json)")
	addSetFlag(cmd, &sets)
	return cmd
}

// quietIO is a run's IO without its report on stdout: noise prints a line
// per run.
func quietIO(cio *cliIO) run.IO {
	sys := cio.runIO()
	sys.Stdout = io.Discard
	return sys
}

func printFloors(w io.Writer, path string, e noise.Entry) error {
	fmt.Fprintf(w, "noise floors of %s (%s) on %s, %d A/A pairs (%d with a run not valid), written to %s:\n",
		e.Scenario, e.ScenarioHash, e.Host, e.Pairs, e.InvalidPairs, path)
	names := e.Names()
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-40s ±%.1f%%\n", n, 100*e.Metrics[n].Floor)
	}
	return nil
}
