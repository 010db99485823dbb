package main

import (
	"fmt"
	"io"
	"strings"
)

// tableCmd prints rows.jsonl as the BENCHMARKS.md table, one line per tool
// and scale in the order run.
func tableCmd(path string, out io.Writer) error {
	rows, err := readRows(path)
	if err != nil {
		return err
	}
	return writeTable(out, rows)
}

func writeTable(out io.Writer, rows []row) error {
	var b strings.Builder
	b.WriteString("| tool | streams | served (ok) | joined | TTFT err p50 | TTFT \\|err\\| p99 | ITL err p50 | ITL \\|err\\| p99 | E2E err p50 | E2E \\|err\\| p99 | CPU per chunk | CPU s (start-up) | foreign per llmbench |\n")
	b.WriteString("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d (%d) | %s | %s | %s | %s | %s | %s | %s | %s | %.1f (%.1f) | %s |\n",
			r.Tool, r.Streams, r.Served, r.OK, joined(r),
			withRel(r.TTFT), absCell(r.TTFT), msCell(r.ITL, r.ITL.P50), absCell(r.ITL),
			msCell(r.E2E, r.E2E.P50), absCell(r.E2E), cpuCell(r), r.CPU, r.Baseline, foreignCell(r))
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func joined(r row) string {
	switch {
	case r.Exit != 0:
		return fmt.Sprintf("exit %d", r.Exit)
	case r.Join == "":
		return "no per-request output"
	case r.Join == "distributions":
		return fmt.Sprintf("distributions (%d reported)", r.Reported)
	}
	return fmt.Sprintf("%d of %d by id", r.Joined, r.Reported)
}

func msCell(e figErr, v float64) string {
	if e.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%+.2f ms", v)
}

func absCell(e figErr) string {
	if e.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f ms", e.P99Abs)
}

func withRel(e figErr) string {
	if e.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%+.2f ms (%+.1f %%)", e.P50, e.RelP50)
}

// cpuCell is the CPU per chunk; at or below zero the tool's run cost less
// than its start-up measured alone: its work per chunk is below the noise
// of its start-up at this scale, and the cell says so rather than print a
// negative cost.
func cpuCell(r row) string {
	switch {
	case r.Chunks == 0:
		return "–"
	case r.CPUPerChunkUS <= 0:
		return "below start-up noise"
	}
	return fmt.Sprintf("%.1f µs", r.CPUPerChunkUS)
}

func foreignCell(r row) string {
	if r.Foreign.Verdict == "" {
		return "–"
	}
	if r.Foreign.Key == "" {
		return "not counted: " + r.Foreign.Verdict
	}
	bound := ""
	if r.Foreign.Key != "foreign_requests" {
		bound = strings.TrimPrefix(r.Foreign.Key, "foreign_requests_") + " "
	}
	return fmt.Sprintf("%s%.0f of %d", bound, r.Foreign.Requests, r.Served)
}
