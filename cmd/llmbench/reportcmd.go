package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	reporthtml "github.com/llmbench-org/llmbench/report/html"
)

func newReportCmd(cio *cliIO) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "report RUN_DIR",
		Short: "Rebuild a run's summary.json and report.html from its raw files and print the summary",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if _, err := os.Stat(filepath.Join(dir, report.RunFile)); err != nil {
				return usageError(fmt.Errorf("%s is not a run directory: %w", dir, err))
			}
			render, ok := map[string]report.Renderer{"text": report.RenderText, "json": report.RenderJSON, "md": report.RenderMarkdown, "html": nil, "csv": nil}[format]
			if !ok {
				return usageError(fmt.Errorf("--format must be text, json, md, csv or html, not %q", format))
			}
			s, err := report.Build(dir)
			if err != nil {
				return err
			}
			b, err := jsonIndent(s)
			if err != nil {
				return err
			}
			if err := writeRunFile(dir, report.SummaryFile, b); err != nil {
				return err
			}
			if _, err := writeHTMLReport(dir, s); err != nil {
				return err
			}
			if err := writeMarkdownReport(dir, s); err != nil {
				return err
			}
			switch format {
			case "csv":
				var records []client.Record
				if _, err := report.ReadJSONL(filepath.Join(dir, report.RequestsFile), func(r *client.Record) error {
					records = append(records, *r)
					return nil
				}); err != nil {
					return err
				}
				slices.SortStableFunc(records, func(a, b client.Record) int { return a.Index - b.Index })
				return report.WriteRequestsCSV(cio.stdout, records)
			case "html":
				_, err := fmt.Fprintln(cio.stdout, filepath.Join(dir, reporthtml.FileName))
				return err
			}
			return render(cio.stdout, s)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "what to print: text, json or md (the summary), csv (one line per request), or html (the path of the rebuilt report.html)")
	return cmd
}

func jsonIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return buf.Bytes(), err
}

// writeRunFile writes one file of a run directory.
func writeRunFile(dir, name string, data []byte) error {
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
