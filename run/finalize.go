package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/llmbench-org/llmbench/report"
	reporthtml "github.com/llmbench-org/llmbench/report/html"
)

// Finalized is what Finalize made of a run directory.
type Finalized struct {
	Summary report.Summary
	// Raw is what the HTML report read of the run directory (its records
	// among it), for whoever needs them next (the gates) without reading
	// them again.
	Raw reporthtml.Input
}

// Finalize turns a run directory's raw files into its summary and reports:
// summary.json, report.html and report.md, and the text summary on text (nil:
// none). It is the one way a run directory is finalized, whether it comes
// from a run, a rebuilt report or merged shards, so all three write the same
// files.
func Finalize(dir string, text io.Writer) (Finalized, error) {
	s, err := report.Build(dir)
	if err != nil {
		return Finalized{}, fmt.Errorf("summarise %s: %w", dir, err)
	}
	fin := Finalized{Summary: s}
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return fin, err
	}
	if err := writeRunFile(dir, report.SummaryFile, js.Bytes()); err != nil {
		return fin, err
	}
	if fin.Raw, err = reporthtml.LoadRaw(dir, s); err != nil {
		return fin, fmt.Errorf("html report: %w", err)
	}
	if _, err := reporthtml.WriteFile(dir, fin.Raw); err != nil {
		return fin, fmt.Errorf("html report: %w", err)
	}
	var md bytes.Buffer
	if err := report.RenderMarkdown(&md, s); err != nil {
		return fin, err
	}
	if err := writeRunFile(dir, report.MarkdownFile, md.Bytes()); err != nil {
		return fin, err
	}
	if text != nil {
		if err := report.RenderText(text, s); err != nil {
			return fin, err
		}
	}
	return fin, nil
}

// writeRunFile writes one file of a run directory.
func writeRunFile(dir, name string, data []byte) error {
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
