package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/report"
)

func newMergeCmd(cio *cliIO) *cobra.Command {
	return &cobra.Command{
		Use:   "merge OUT_DIR SHARD_RUN_DIR...",
		Short: "Merge the runs of the shards of one run (run --shard i/n) into one run directory and summarise it",
		Args:  cobra.MinimumNArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := args[0]
			if err := report.Merge(out, args[1:]); err != nil {
				return usageError(err)
			}
			s, err := report.Build(out)
			if err != nil {
				return fmt.Errorf("summarise %s: %w", out, err)
			}
			b, err := jsonIndent(s)
			if err != nil {
				return err
			}
			if err := writeRunFile(out, report.SummaryFile, b); err != nil {
				return err
			}
			if _, err := writeHTMLReport(out, s); err != nil {
				return err
			}
			if err := report.RenderText(cio.stdout, s); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cio.stdout, "run directory: %s\n", out)
			return err
		},
	}
}
