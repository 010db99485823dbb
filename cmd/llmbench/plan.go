package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/run"
)

func newPlanCmd() *cobra.Command {
	var n int
	var asJSON bool
	var sets []string
	cmd := &cobra.Command{
		Use:   "plan FILE",
		Short: "Dry run: print a scenario's phases, arrival schedule and first requests without sending anything",
		Long: `Plan builds the scenario's plan exactly as a run would and prints it: each
phase's load and limits, the arrivals an open loop schedules, and the first
requests (ids, intended offsets, token targets, prompt text). The same
scenario and seed always print the same plan, byte for byte.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 0 {
				return asUsage(errors.New("--requests must be ≥ 0"))
			}
			sc, plan, err := run.Load(args[0], sets)
			if err != nil {
				return err
			}
			return run.WritePlan(cmd.OutOrStdout(), sc, plan, n, asJSON)
		},
	}
	cmd.Flags().IntVarP(&n, "requests", "n", 10, "how many of the first requests to print")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: the summary and the first requests in full")
	addSetFlag(cmd, &sets)
	return cmd
}
