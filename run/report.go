package run

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	reporthtml "github.com/llmbench-org/llmbench/report/html"
	reportparquet "github.com/llmbench-org/llmbench/report/parquet"
	"github.com/llmbench-org/llmbench/rundir"
)

// ReportOptions are `llmbench report`'s settings.
type ReportOptions struct {
	// Format is what to print: text, json or md (the summary), csv (one
	// line per request), html (the path of the rebuilt report.html) or
	// parquet (write requests.parquet and print its path).
	Format  string
	Verbose bool // text: every finding whole, with its evidence
	Width   int  // text: the width in columns (0: the terminal's, at most 100); CheckWidth
	Chunks  bool // parquet: also chunks.parquet, one row per output chunk
}

// Report rebuilds the run directory or trial set dir from its raw files
// (Finalize) and prints it on w in o.Format: `llmbench report`. A path that
// is neither, or a format that does not fit it, is a *ConfigError.
func Report(dir string, o ReportOptions, w io.Writer) error {
	if err := CheckWidth(o.Width); err != nil {
		return err
	}
	if fileExists(filepath.Join(dir, rundir.TrialsFile)) {
		return reportTrials(dir, o, w)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.RunFile)); err != nil {
		return configError(fmt.Errorf("%s is not a run directory: %w", dir, err))
	}
	_, err := reportRun(dir, o, w)
	return err
}

// reportRun rebuilds the run directory dir and prints it in o.Format; it
// returns the rebuilt summary (zero for parquet, which rebuilds none).
func reportRun(dir string, o ReportOptions, w io.Writer) (report.Summary, error) {
	render, ok := map[string]report.Renderer{"text": report.RenderText, "json": report.RenderJSON, "md": report.RenderMarkdown, "html": nil, "csv": nil, "parquet": nil}[o.Format]
	if !ok {
		return report.Summary{}, configError(fmt.Errorf("--format must be text, json, md, csv, html or parquet, not %q", o.Format))
	}
	if o.Format == "parquet" { // an export of the raw records: no summary to rebuild
		pw, err := reportparquet.Write(dir, reportparquet.Options{Chunks: o.Chunks})
		if err != nil {
			return report.Summary{}, err
		}
		_, err = fmt.Fprintln(w, strings.Join(pw.Files, "\n"))
		return report.Summary{}, err
	}
	fin, err := Finalize(dir, nil)
	if err != nil {
		return report.Summary{}, err
	}
	switch o.Format {
	case "csv":
		records := fin.Raw.Records
		slices.SortStableFunc(records, func(a, b client.Record) int { return a.Index - b.Index })
		return fin.Summary, report.WriteRequestsCSVDigested(w, records, fin.Raw.Chunks)
	case "html":
		_, err := fmt.Fprintln(w, filepath.Join(dir, reporthtml.FileName))
		return fin.Summary, err
	}
	if o.Format == "text" {
		return fin.Summary, report.RenderTextWith(w, fin.Summary, report.TextOptions{Width: summaryWidth(w, o.Width), Verbose: o.Verbose, RunDir: dir})
	}
	return fin.Summary, render(w, fin.Summary)
}

// reportTrials reports each trial of the trial set dir in the order they
// ran. A JSON document or a CSV table describes one run: concatenated they
// would read as one broken file, so those formats name the trials instead.
func reportTrials(dir string, o ReportOptions, w io.Writer) error {
	trials, err := rundir.Trials(dir)
	if err != nil {
		return configError(err)
	}
	switch o.Format {
	case "text", "md", "html", "parquet":
	case "json", "csv":
		return configError(fmt.Errorf("%s is a trial set of %d trials (%s): --format %s describes one run; give one trial, e.g. llmbench report %s --format %s",
			dir, len(trials), trialNames(trials), o.Format, trials[0], o.Format))
	default:
		_, err := reportRun(dir, o, w) // which names the formats
		return err
	}
	var sums []report.Summary
	for i, t := range trials {
		if o.Format == "text" || o.Format == "md" {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "trial %d of %d: %s\n\n", i+1, len(trials), t)
		}
		s, err := reportRun(t, o, w)
		if err != nil {
			return fmt.Errorf("trial %d of %d (%s): %w", i+1, len(trials), t, err)
		}
		sums = append(sums, s)
	}
	if o.Format == "text" {
		fmt.Fprintln(w)
		PrintSpread(w, "spread", sums)
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

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
