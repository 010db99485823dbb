package main

import (
	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/run"
)

func newReportCmd(cio *cliIO) *cobra.Command {
	var o run.ReportOptions
	cmd := &cobra.Command{
		Use:   "report RUN_DIR|TRIAL_SET",
		Short: "Rebuild a run's summary.json and report.html from its raw files and print the summary",
		Long: `Rebuild a run's summary.json, report.html and report.md from its raw files and print the summary.
Given a trial set (llmbench run --repeat), it rebuilds every trial and prints each one's text or
md summary, report.html path or parquet files in the order they ran (text ends with the spread of
the trials' headline figures); json and csv describe one run, so they want one trial's directory.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return run.Report(args[0], o, cio.stdout) },
	}
	cmd.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "text: print every finding whole, with its evidence")
	cmd.Flags().IntVar(&o.Width, "width", 0, "text: the width in columns, at least 60 (default: the terminal's, at most 100)")
	cmd.Flags().BoolVar(&o.Chunks, "chunks", false, "parquet: also write chunks.parquet, one row per output chunk")
	cmd.Flags().StringVar(&o.Format, "format", "text", "what to print: text, json or md (the summary), csv (one line per request), html (the path of the rebuilt report.html), or parquet (write requests.parquet, one row per request, into the run directory and print its path)")
	return cmd
}
