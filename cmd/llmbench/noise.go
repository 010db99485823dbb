package main

import (
	"github.com/spf13/cobra"

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
			oldNames(cmd, cio.stderr)
			_, err := run.LearnNoise(cmd.Context(), run.NoiseConfig{Scenario: args[0], Sets: sets, RunsDir: runsDir, Pairs: pairs, Out: out}, cio.runIO())
			return err
		},
	}
	cmd.Flags().IntVar(&pairs, "pairs", 10, "A/A pairs to run")
	cmd.Flags().StringVar(&runsDir, "output-dir", "runs", "directory under which the run directories are created")
	cmd.Flags().StringVar(&runsDir, "runs", "runs", "the old name of --output-dir")
	_ = cmd.Flags().MarkHidden("runs")
	cmd.Flags().StringVar(&out, "out", "", "noise file to write (default: $LLMBENCH_NOISE or ~/.config/llmbench/noise.json)")
	addSetFlag(cmd, &sets)
	return cmd
}
