package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime/debug"

	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/rundir"

	"github.com/llmbench-org/llmbench/report"
	reporthtml "github.com/llmbench-org/llmbench/report/html"
)

// Finalized is what Finalize made of a run directory.
type Finalized struct {
	Summary report.Summary
	// Gates is the gates' report when the run has gates (its scenario's,
	// and the thresholds and baseline it was run with); nil otherwise.
	Gates *gates.Report
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
func Finalize(dir string, text io.Writer) (Finalized, error) { return finalize(dir, text, false, 0) }

// finalize is Finalize; verbose prints the findings whole, width (0: the
// terminal's) is the text's width in columns.
func finalize(dir string, text io.Writer, verbose bool, width int) (Finalized, error) {
	// A large run's report holds every request (without its chunks): a
	// soft memory limit makes the collector work harder near it rather
	// than let the heap double past it. One set from outside (GOMEMLIMIT)
	// is kept.
	if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		debug.SetMemoryLimit(finalizeMemoryLimit)
		defer debug.SetMemoryLimit(math.MaxInt64)
	}
	// requests.jsonl is read once, in one streaming pass: the summary, the
	// HTML report and the gates are all computed from what it gave.
	l, err := report.Load(dir)
	if err != nil {
		return Finalized{}, fmt.Errorf("summarise %s: %w", dir, err)
	}
	s := l.Summary()
	fin := Finalized{Summary: s, Raw: reporthtml.FromLoaded(l, s)}
	// The gates' verdicts go into every report, so a CI job's summary says
	// why it failed.
	if rep, _ := finalGates(dir, s, l); rep != nil {
		fin.Gates = rep
		s.Gates = verdicts(*rep)
		fin.Summary, fin.Raw.Summary = s, s
	}
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return fin, err
	}
	if err := writeRunFile(dir, rundir.SummaryFile, js.Bytes()); err != nil {
		return fin, err
	}
	if _, err := reporthtml.WriteFile(dir, fin.Raw); err != nil {
		return fin, fmt.Errorf("html report: %w", err)
	}
	var md bytes.Buffer
	if err := report.RenderMarkdown(&md, s); err != nil {
		return fin, err
	}
	if err := writeRunFile(dir, rundir.MarkdownFile, md.Bytes()); err != nil {
		return fin, err
	}
	if text != nil {
		// The summary ends with the run directory and its report.html: where
		// the whole report is.
		if err := report.RenderTextWith(text, s, report.TextOptions{Width: summaryWidth(text, width), Verbose: verbose, RunDir: dir}); err != nil {
			return fin, err
		}
	}
	return fin, nil
}

// finalizeMemoryLimit is the soft memory limit while a run directory is
// finalized: under the 1 GB a report of a million requests is allowed.
const finalizeMemoryLimit = 768 << 20

// finalGates evaluates the run's gates: its scenario's thresholds, and the
// thresholds and baseline it was run with (run.json); nil without gates. A
// baseline that is not there (a run directory moved to another machine)
// leaves the gates that need it unevaluated.
func finalGates(dir string, s report.Summary, l *report.Loaded) (*gates.Report, error) {
	meta, _ := rundir.ReadMeta(dir) // report.Load read it already
	gs, err := readGates(dir, meta.Thresholds)
	if err != nil || len(gs) == 0 {
		// Gates that do not parse were refused before the run (and are
		// `llmbench gate`'s to report): the reports go without verdicts.
		return nil, nil
	}
	var base *gates.Run
	var bs gates.Side
	if meta.Baseline != "" {
		// A run, a trial set or a directory of runs (a history).
		if side, err := gates.LoadSide(meta.Baseline); err == nil {
			bs, base = side, &side[0]
		}
	}
	cur := gates.NewRunLoaded(s, l)
	rep := gates.NewReport(cur, base, gs.EvaluateSides(gates.Side{cur}, bs, gates.Options{Bootstrap: gates.DefaultBootstrap, Floors: defaultFloors(dir)}))
	return &rep, nil
}

// verdicts is a gates' report as the summary carries it.
func verdicts(rep gates.Report) *report.GateVerdicts {
	pass, fail, errs := rep.Counts()
	v := &report.GateVerdicts{Passed: rep.Passed(), Baseline: rep.Baseline, Pass: pass, Fail: fail, Inconclusive: rep.Inconclusive(), Unevaluable: errs}
	for _, r := range rep.Results {
		v.Results = append(v.Results, report.GateVerdict{Gate: r.Gate, Status: string(r.Status), Metric: r.Metric, Unit: r.Unit,
			Observed: r.Observed, Limit: r.Limit, Baseline: r.Baseline, Reason: r.Reason})
	}
	return v
}

// writeRunFile writes one file of a run directory atomically: a full disk
// leaves the previous one whole.
func writeRunFile(dir, name string, data []byte) error {
	return rundir.WriteFile(filepath.Join(dir, name), data)
}
