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
		Use:   "report RUN_DIR|TRIAL_SET",
		Short: "Rebuild a run's summary.json and report.html from its raw files and print the summary",
		Long: `Rebuild a run's summary.json, report.html and report.md from its raw files and print the summary.
Given a trial set (llmbench run --repeat), it rebuilds every trial and prints each one's text or
md summary, report.html path or parquet files in the order they ran (text ends with the spread of
the trials' headline figures); json and csv describe one run, so they want one trial's directory.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if _, err := os.Stat(filepath.Join(dir, rundir.TrialsFile)); err == nil {
				return reportTrials(cio, dir, reportOpts{format: format, verbose: verbose, chunks: chunks})
			}
			if _, err := os.Stat(filepath.Join(dir, rundir.RunFile)); err != nil {
				return asUsage(fmt.Errorf("%s is not a run directory: %w", dir, err))
			}
			_, err := reportRun(cio, dir, reportOpts{format: format, verbose: verbose, chunks: chunks})
			return err
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "text: print every finding whole, with its evidence")
	cmd.Flags().BoolVar(&chunks, "chunks", false, "parquet: also write chunks.parquet, one row per output chunk")
	cmd.Flags().StringVar(&format, "format", "text", "what to print: text, json or md (the summary), csv (one line per request), html (the path of the rebuilt report.html), or parquet (write requests.parquet, one row per request, into the run directory and print its path)")
	return cmd
}

// reportOpts are the report command's settings.
type reportOpts struct {
	format          string
	verbose, chunks bool
}

// reportRun rebuilds the run directory dir and prints it in opts.format;
// it returns the rebuilt summary (zero for parquet, which rebuilds none).
func reportRun(cio *cliIO, dir string, opts reportOpts) (report.Summary, error) {
	render, ok := map[string]report.Renderer{"text": report.RenderText, "json": report.RenderJSON, "md": report.RenderMarkdown, "html": nil, "csv": nil, "parquet": nil}[opts.format]
	if !ok {
		return report.Summary{}, asUsage(fmt.Errorf("--format must be text, json, md, csv, html or parquet, not %q", opts.format))
	}
	if opts.format == "parquet" { // an export of the raw records: no summary to rebuild
		w, err := reportparquet.Write(dir, reportparquet.Options{Chunks: opts.chunks})
		if err != nil {
			return report.Summary{}, err
		}
		_, err = fmt.Fprintln(cio.stdout, strings.Join(w.Files, "\n"))
		return report.Summary{}, err
	}
	fin, err := run.Finalize(dir, nil)
	if err != nil {
		return report.Summary{}, err
	}
	switch opts.format {
	case "csv":
		records := fin.Raw.Records
		slices.SortStableFunc(records, func(a, b client.Record) int { return a.Index - b.Index })
		return fin.Summary, report.WriteRequestsCSVDigested(cio.stdout, records, fin.Raw.Chunks)
	case "html":
		_, err := fmt.Fprintln(cio.stdout, filepath.Join(dir, reporthtml.FileName))
		return fin.Summary, err
	}
	if opts.format == "text" && opts.verbose {
		render = report.RenderTextVerbose
	}
	return fin.Summary, render(cio.stdout, fin.Summary)
}

// reportTrials reports each trial of the trial set dir in the order they
// ran. A JSON document or a CSV table describes one run: concatenated they
// would read as one broken file, so those formats name the trials instead.
func reportTrials(cio *cliIO, dir string, opts reportOpts) error {
	trials, err := rundir.Trials(dir)
	if err != nil {
		return asUsage(err)
	}
	switch opts.format {
	case "text", "md", "html", "parquet":
	case "json", "csv":
		return asUsage(fmt.Errorf("%s is a trial set of %d trials (%s): --format %s describes one run; give one trial, e.g. llmbench report %s --format %s",
			dir, len(trials), trialNames(trials), opts.format, trials[0], opts.format))
	default:
		_, err := reportRun(cio, dir, opts) // which names the formats
		return err
	}
	var sums []report.Summary
	for i, t := range trials {
		if opts.format == "text" || opts.format == "md" {
			if i > 0 {
				fmt.Fprintln(cio.stdout)
			}
			fmt.Fprintf(cio.stdout, "trial %d of %d: %s\n\n", i+1, len(trials), t)
		}
		s, err := reportRun(cio, t, opts)
		if err != nil {
			return fmt.Errorf("trial %d of %d (%s): %w", i+1, len(trials), t, err)
		}
		sums = append(sums, s)
	}
	if opts.format == "text" {
		fmt.Fprintln(cio.stdout)
		run.PrintSpread(cio.stdout, "spread", sums)
	}
	return nil
}

// trialNames lists the trials' directory names.
func trialNames(trials []string) string {
	names := make([]string, len(trials))
	for i, t := range trials {
		names[i] = filepath.Base(t)
	}
	return strings.Join(names, ", ")
}
