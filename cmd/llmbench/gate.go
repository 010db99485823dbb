package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/report/noise"
	"github.com/llmbench-org/llmbench/run"
)

func newGateCmd(cio *cliIO) *cobra.Command {
	var (
		cfg       run.GateConfig
		list      bool
		noisePath string
	)
	cmd := &cobra.Command{
		Use:   "gate RUN_DIR",
		Short: "Check a run against its scenario's thresholds and a baseline run; exit 3 when a gate fails, 4 when one is inconclusive",
		Long:  gates.CommandHelp,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				return gates.WriteMetrics(cio.stdout)
			}
			if len(args) != 1 {
				return asUsage(errors.New("gate needs RUN_DIR (or --metrics)"))
			}
			cfg.Noise, cfg.NoiseRequired = noise.FileFor(cio.getenv, noisePath)
			_, err := run.Gate(args[0], cfg, cio.stdout)
			return err
		},
	}
	cmd.Flags().StringArrayVar(&cfg.Baselines, "baseline", nil, "baseline to compare with: a run directory, a trial set, a directory of runs, or a summary.json (repeatable: a history)")
	cmd.Flags().StringVar(&noisePath, "noise", "", "noise file with the floors learned by llmbench noise (default: $LLMBENCH_NOISE or ~/.config/llmbench/noise.json)")
	cmd.Flags().StringArrayVar(&cfg.Thresholds, "threshold", nil, `a gate expression beyond the scenario's, e.g. "client.ttft.p99 < 500ms" (repeatable)`)
	cmd.Flags().StringVar(&cfg.JUnit, "junit", "", "also write the results as JUnit XML to this file")
	cmd.Flags().BoolVar(&list, "metrics", false, "list the metric names gates can use, and exit")
	return cmd
}
