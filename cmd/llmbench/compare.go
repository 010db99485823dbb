package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/report"
)

func newCompareCmd(cio *cliIO) *cobra.Command {
	return &cobra.Command{
		Use:   "compare RUN_DIR RUN_DIR...",
		Short: "Put runs side by side: each headline number and its change against the first run",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var sums []report.Summary
			for _, dir := range args {
				if _, err := os.Stat(filepath.Join(dir, report.RunFile)); err != nil {
					return usageError(fmt.Errorf("%s is not a run directory: %w", dir, err))
				}
				s, err := report.Build(dir)
				if err != nil {
					return err
				}
				sums = append(sums, s)
			}
			return report.RenderComparison(cio.stdout, report.Compare(sums...))
		},
	}
}
