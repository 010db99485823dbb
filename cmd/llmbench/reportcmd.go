package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	reporthtml "github.com/llmbench-org/llmbench/report/html"
	reportparquet "github.com/llmbench-org/llmbench/report/parquet"
	"github.com/llmbench-org/llmbench/run"
	"github.com/llmbench-org/llmbench/rundir"
)

func newReportCmd(cio *cliIO) *cobra.Command {
	var format string
	var verbose, chunks bool
	cmd := &cobra.Command{
		Use:   "report RUN_DIR",
		Short: "Rebuild a run's summary.json and report.html from its raw files and print the summary",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if _, err := os.Stat(filepath.Join(dir, rundir.RunFile)); err != nil {
				return asUsage(fmt.Errorf("%s is not a run directory: %w", dir, err))
			}
			render, ok := map[string]report.Renderer{"text": report.RenderText, "json": report.RenderJSON, "md": report.RenderMarkdown, "html": nil, "csv": nil, "parquet": nil}[format]
			if !ok {
				return asUsage(fmt.Errorf("--format must be text, json, md, csv, html or parquet, not %q", format))
			}
			if format == "parquet" { // an export of the raw records: no summary to rebuild
				w, err := reportparquet.Write(dir, reportparquet.Options{Chunks: chunks})
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(cio.stdout, strings.Join(w.Files, "\n"))
				return err
			}
			fin, err := run.Finalize(dir, nil)
			if err != nil {
				return err
			}
			switch format {
			case "csv":
				records := fin.Raw.Records
				slices.SortStableFunc(records, func(a, b client.Record) int { return a.Index - b.Index })
				return report.WriteRequestsCSVDigested(cio.stdout, records, fin.Raw.Chunks)
			case "html":
				_, err := fmt.Fprintln(cio.stdout, filepath.Join(dir, reporthtml.FileName))
				return err
			}
			if format == "text" && verbose {
				render = report.RenderTextVerbose
			}
			return render(cio.stdout, fin.Summary)
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "text: print every finding whole, with its evidence")
	cmd.Flags().BoolVar(&chunks, "chunks", false, "parquet: also write chunks.parquet, one row per output chunk")
	cmd.Flags().StringVar(&format, "format", "text", "what to print: text, json or md (the summary), csv (one line per request), html (the path of the rebuilt report.html), or parquet (write requests.parquet, one row per request, into the run directory and print its path)")
	return cmd
}
