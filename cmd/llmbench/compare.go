package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/report"
)

func newCompareCmd(cio *cliIO) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "compare RUN_DIR RUN_DIR...",
		Short: "Put runs side by side: each headline number and its change against the first run",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			render := report.RenderComparison
			switch format {
			case "text":
			case "md":
				render = report.RenderComparisonMarkdown
			default:
				return asUsage(fmt.Errorf("--format %q: want text or md", format))
			}
			var sums []report.Summary
			for _, dir := range args {
				if _, err := os.Stat(filepath.Join(dir, report.RunFile)); err != nil {
					return asUsage(fmt.Errorf("%s is not a run directory: %w", dir, err))
				}
				s, err := report.Build(dir)
				if err != nil {
					return err
				}
				sums = append(sums, s)
			}
			return render(cio.stdout, report.Compare(sums...))
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text, or md for a pull-request comment or a CI job summary")
	return cmd
}
