package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/run"
)

func newMergeCmd(cio *cliIO) *cobra.Command {
	return &cobra.Command{
		Use:   "merge OUT_DIR SHARD_RUN_DIR...",
		Short: "Merge the runs of the shards of one run (run --shard i/n) into one run directory and summarise it",
		Args:  cobra.MinimumNArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := args[0]
			if err := report.Merge(out, args[1:]); err != nil {
				return asUsage(err)
			}
			if _, err := run.Finalize(out, cio.stdout); err != nil {
				return err
			}
			_, err := fmt.Fprintf(cio.stdout, "run directory: %s\n", out)
			return err
		},
	}
}
