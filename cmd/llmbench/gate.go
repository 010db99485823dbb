package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/workload"
)

// exitGate is the exit code of a run whose gates did not all pass: the run
// itself worked, its numbers do not meet the thresholds.
const exitGate = 3

func newGateCmd(cio *cliIO) *cobra.Command {
	var (
		baseline, junit string
		thresholds      []string
		list            bool
	)
	cmd := &cobra.Command{
		Use:   "gate RUN_DIR",
		Short: "Check a run against its scenario's thresholds and a baseline run; exit 3 when a gate fails",
		Long: `Evaluates the thresholds in RUN_DIR/scenario.yaml (gates.thresholds) and every --threshold
against the run's summary, prints one line per gate, and exits 3 when any gate fails or cannot be
evaluated. Expressions look like

  client.ttft.p99 < 500ms
  client.requests.failed == 0
  client.ttft.p99 < baseline * 1.10
  client.ttft.p99 regression < 10%

A regression gate compares with the run given by --baseline (a run directory, or a summary.json);
when both runs have their raw records it fails only when the whole 95% bootstrap confidence
interval of the regression lies beyond the allowed one. --metrics lists the metric names.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				return printGateMetrics(cio)
			}
			if len(args) != 1 {
				return usageError(errors.New("gate needs RUN_DIR (or --metrics)"))
			}
			dir := args[0]
			if _, err := os.Stat(filepath.Join(dir, report.RunFile)); err != nil {
				return usageError(fmt.Errorf("%s is not a run directory: %w", dir, err))
			}
			return evaluateGates(dir, nil, baseline, thresholds, cio, junit)
		},
	}
	cmd.Flags().StringVar(&baseline, "baseline", "", "baseline run to compare with: a run directory or a summary.json")
	cmd.Flags().StringArrayVar(&thresholds, "threshold", nil, `a gate expression beyond the scenario's, e.g. "client.ttft.p99 < 500ms" (repeatable)`)
	cmd.Flags().StringVar(&junit, "junit", "", "also write the results as JUnit XML to this file")
	cmd.Flags().BoolVar(&list, "metrics", false, "list the metric names gates can use, and exit")
	return cmd
}

// evaluateGates checks the run in dir (cur, when the caller has it loaded
// already; nil to load it) against its scenario's thresholds and the extra
// expressions, against the baseline run when baselineDir is set;
// prints the results, writes JUnit XML to junitPath when set, and returns an
// error with exit code 3 when a gate fails or cannot be evaluated (2 for an
// expression that does not parse).
func evaluateGates(dir string, cur *gates.Run, baselineDir string, extra []string, cio *cliIO, junitPath string) error {
	gs, err := readGates(dir, extra)
	if err != nil {
		return err
	}
	if len(gs) == 0 {
		fmt.Fprintln(cio.stdout, "gates: none (the scenario has no gates.thresholds and no --threshold was given)")
		return nil
	}
	if cur == nil {
		loaded, err := gates.LoadRun(dir)
		if err != nil {
			return err
		}
		cur = &loaded
	}
	base, err := loadBaseline(baselineDir)
	if err != nil {
		return err
	}
	return reportGates(gs, *cur, base, cio, junitPath)
}

// gatesForRun parses the gates of a run about to start, with the baseline
// they compare with, and checks where --junit goes: before anything is sent,
// since a typo in one must not cost a whole benchmark. No gates: nil.
func gatesForRun(sc scenarios.Scenario, plan *workload.Plan, opts runOpts) (gates.Gates, *gates.Run, error) {
	if sc.Gates == nil && len(opts.thresholds) == 0 {
		return nil, nil, nil
	}
	gs, err := parseGates(opts.scenario, sc.Gates, opts.thresholds, phaseNames(plan))
	if err != nil {
		return nil, nil, err
	}
	base, err := loadBaseline(opts.baseline)
	if err != nil {
		return nil, nil, err
	}
	if opts.junit != "" {
		if fi, err := os.Stat(filepath.Dir(opts.junit)); err != nil || !fi.IsDir() {
			return nil, nil, usageError(fmt.Errorf("--junit %s: its directory does not exist", opts.junit))
		}
	}
	return gs, base, nil
}

// loadBaseline loads --baseline (nil when it is not set).
func loadBaseline(dir string) (*gates.Run, error) {
	if dir == "" {
		return nil, nil
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, usageError(fmt.Errorf("--baseline: %w", err))
	}
	b, err := gates.LoadRun(dir)
	if err != nil {
		return nil, usageError(fmt.Errorf("--baseline: %w", err))
	}
	return &b, nil
}

// reportGates evaluates gs, prints the results, writes JUnit XML when
// junitPath is set, and returns exit code 3 when a gate fails or cannot be
// evaluated.
func reportGates(gs gates.Gates, cur gates.Run, base *gates.Run, cio *cliIO, junitPath string) error {
	rep := gates.NewReport(cur, base, gs.EvaluateRuns(cur, base, gates.DefaultBootstrap))
	if err := gates.RenderText(cio.stdout, rep); err != nil {
		return err
	}
	if junitPath != "" {
		var buf bytes.Buffer
		if err := gates.RenderJUnit(&buf, rep); err != nil {
			return err
		}
		if err := os.WriteFile(junitPath, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write JUnit report: %w", err)
		}
	}
	if !rep.Passed() {
		_, failed, unevaluable := rep.Counts()
		return codedError{code: exitGate, err: fmt.Errorf("gates failed: %d failed, %d could not be evaluated", failed, unevaluable)}
	}
	return nil
}

// readGates parses the scenario's thresholds (when the run directory has its
// scenario; only its gates section is read, so a run directory copied to
// another machine still gates) and the extra expressions, reporting every
// bad one with where it came from.
func readGates(dir string, extra []string) (gates.Gates, error) {
	path := filepath.Join(dir, report.ScenarioFile)
	g, err := scenarios.LoadGates(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, usageError(fmt.Errorf("read the gates of %s: %w", dir, err))
	}
	return parseGates(path, g, extra, nil)
}

// parseGates parses the scenario's thresholds (from the file at path; g may
// be nil) and the extra ones. With phases, a gate on a phase the plan does
// not have is an error too: run checks its gates before it sends anything.
func parseGates(path string, g *scenarios.Gates, extra []string, phases []string) (gates.Gates, error) {
	type source struct{ where, expr string }
	var exprs []source
	if g != nil {
		for i, e := range g.Thresholds {
			exprs = append(exprs, source{fmt.Sprintf("%s: gates.thresholds[%d]", path, i), e})
		}
	}
	for _, e := range extra {
		exprs = append(exprs, source{"--threshold", e})
	}
	var gs gates.Gates
	var errs []error
	for _, s := range exprs {
		g, err := gates.Parse(s.expr)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", s.where, err))
		case phases != nil && g.Phase() != "" && !slices.Contains(phases, g.Phase()):
			errs = append(errs, fmt.Errorf("%s: gate %q: the plan has no phase %q (its phases: %s)",
				s.where, s.expr, g.Phase(), strings.Join(phases, ", ")))
		default:
			gs = append(gs, g)
		}
	}
	if len(errs) > 0 {
		return nil, usageError(errors.Join(errs...))
	}
	return gs, nil
}

func printGateMetrics(cio *cliIO) error {
	tw := tabwriter.NewWriter(cio.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tunit\tbetter\tmeaning")
	for _, m := range gates.Metrics() {
		better := m.Better
		if better == "" {
			better = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Name, m.Unit, better, m.Doc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(cio.stdout, "\nEvery client.* and server.* metric also reads one phase alone (a sweep point, say):"+
		" phase[NAME].<metric>, e.g. phase[rate-8].client.ttft.p99 < 1s.")
	return err
}
