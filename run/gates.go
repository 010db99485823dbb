package run

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/report/noise"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/workload"
)

// GateConfig says how to gate a finished run.
type GateConfig struct {
	// Baseline is the baseline for baseline and regression gates: a run
	// directory, a trial set, a directory of baseline runs, or a
	// summary.json ("" = none). Baselines are more of them: together, the
	// baseline side's runs (a history).
	Baseline   string
	Baselines  []string
	Thresholds []string // gates beyond the scenario's
	JUnit      string   // also write the results as JUnit XML here ("" = no)
	// Noise is a noise file (llmbench noise) whose entry for the baseline's
	// scenario and host gives the noise floors of single-run sides ("" =
	// none); NoiseRequired makes a file without that entry an error (it was
	// named on the command line, not found by default).
	Noise         string
	NoiseRequired bool
}

// baselines are every baseline path the config names.
func (c GateConfig) baselines() []string {
	out := slices.Clone(c.Baselines)
	if c.Baseline != "" && !slices.Contains(out, c.Baseline) {
		out = append([]string{c.Baseline}, out...)
	}
	return out
}

// Gate checks the run in dir against every gate it was run with — its
// scenario's thresholds and the --threshold expressions it was given (both
// recorded in the run directory) — and cfg's, against cfg's baseline, or
// the baseline the run was given when cfg names none. It prints the results
// on w, and returns *GatesFailed when a gate fails or cannot be evaluated.
// A flag it cannot use is the user's error (*ConfigError): a --baseline
// when no gate compares with one, a --junit when there is no gate. Without
// any gate it says so and returns a nil report.
func Gate(dir string, cfg GateConfig, w io.Writer) (*gates.Report, error) {
	first := dir // a trial set's gates are its first trial's
	if trials, err := rundir.Trials(dir); err == nil {
		first = trials[0]
	}
	recorded, err := recordedGates(first)
	if err != nil {
		return nil, err
	}
	gs, err := readGates(first, distinct(slices.Concat(recorded.Thresholds, cfg.Thresholds)))
	if err != nil {
		return nil, err
	}
	baselines := cfg.baselines()
	if len(gs) == 0 {
		if len(baselines) > 0 || cfg.JUnit != "" {
			return nil, configError(fmt.Errorf("%s has no gates (its scenario has no gates.thresholds, it was run with no --threshold, and none was given): --baseline and --junit have nothing to do", dir))
		}
		fmt.Fprintln(w, "gates: none (the scenario has no gates.thresholds, and neither the run nor this command was given a --threshold)")
		return nil, nil
	}
	if !slices.ContainsFunc(gs, gates.Gate.NeedsBaseline) {
		if len(baselines) > 0 {
			return nil, configError(fmt.Errorf("--baseline %s: none of the %d gates of %s compares with a baseline (add a regression gate, e.g. --threshold \"client.ttft.p99 regression < 10%%\")", strings.Join(baselines, ", "), len(gs), dir))
		}
	} else if len(baselines) == 0 {
		// The baseline the run was given, where it still is; a gate that
		// needs one is unevaluable without it, and says so.
		if _, err := os.Stat(recorded.Baseline); recorded.Baseline != "" && err == nil {
			baselines = []string{recorded.Baseline}
			fmt.Fprintf(w, "baseline: %s (the run's own; --baseline picks another)\n", recorded.Baseline)
		}
	}
	cur, err := gates.LoadSide(dir)
	if err != nil {
		// The gates exist but nothing can be measured against them: a gate
		// that cannot be evaluated fails the gate (exit 3), not the tool.
		return nil, &GatesFailed{Unevaluable: len(gs), Cause: fmt.Errorf("load %s: %w", dir, err)}
	}
	var base gates.Side
	for _, b := range baselines {
		side, err := loadBaselineSide(b)
		if err != nil {
			return nil, err
		}
		base = append(base, side...)
	}
	floors, err := noiseFloors(cfg, baselines, first, w)
	if err != nil {
		return nil, err
	}
	return reportSides(gs, cur, base, gates.Options{Bootstrap: gates.DefaultBootstrap, Floors: floors}, w, cfg.JUnit)
}

// noiseFloors are the floors of the noise file's entry for the baseline's
// scenario and host (the run's own when there is no baseline).
func noiseFloors(cfg GateConfig, baselines []string, run string, w io.Writer) (gates.Floors, error) {
	if cfg.Noise == "" {
		return gates.Floors{}, nil
	}
	f, err := noise.Load(cfg.Noise)
	if err != nil {
		return gates.Floors{}, configError(fmt.Errorf("--noise: %w", err))
	}
	keyDir := run
	if len(baselines) > 0 {
		keyDir = baselines[0]
	}
	k, err := noise.KeyOf(keyDir)
	if err != nil {
		if cfg.NoiseRequired {
			return gates.Floors{}, configError(fmt.Errorf("--noise %s: %w", cfg.Noise, err))
		}
		return gates.Floors{}, nil
	}
	e, ok := f.Lookup(k)
	if !ok {
		if cfg.NoiseRequired {
			return gates.Floors{}, configError(fmt.Errorf("--noise %s has no floors for scenario %s (%s) on host %q (it has: %s); learn them with llmbench noise",
				cfg.Noise, k.Scenario, k.ScenarioHash, k.Host, strings.Join(f.Keys(), "; ")))
		}
		return gates.Floors{}, nil
	}
	fmt.Fprintf(w, "noise floors: %s (%d A/A pairs of %s on %s)\n", cfg.Noise, e.Pairs, e.Scenario, e.Host)
	return e.Floors(cfg.Noise), nil
}

// defaultFloors are the floors the default noise file holds for the run in
// dir, for the gates a run checks as it ends (none when it has none).
func defaultFloors(dir string) gates.Floors {
	path := noise.DefaultPath(os.Getenv)
	if path == "" {
		return gates.Floors{}
	}
	fl, _ := noiseFloors(GateConfig{Noise: path}, nil, dir, io.Discard)
	return fl
}

// loadBaselineSide loads one --baseline: a run, a trial set or a directory
// of runs.
func loadBaselineSide(path string) (gates.Side, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, configError(fmt.Errorf("--baseline: %w", err))
	}
	side, err := gates.LoadSide(path)
	if err != nil {
		return nil, configError(fmt.Errorf("--baseline: %w", err))
	}
	return side, nil
}

// distinct is exprs without repeats, in their order: a --threshold given
// again to `llmbench gate` that the run was given already is one gate.
func distinct(exprs []string) []string {
	var out []string
	for _, e := range exprs {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// recordedGates reads what the run in dir records of the gates it was run
// with beside its scenario's (run.json): its --threshold expressions and its
// baseline. A run.json that does not decode records none: loading the run
// then fails its gates, naming why.
func recordedGates(dir string) (rundir.RunMeta, error) {
	if _, err := os.Stat(filepath.Join(dir, rundir.RunFile)); err != nil {
		return rundir.RunMeta{}, configError(fmt.Errorf("%s is not a run directory: %w", dir, err))
	}
	meta, _ := rundir.ReadMeta(dir)
	return meta, nil
}

// gate is the gate stage: the run's outcome once it is finalized. A run
// whose outputs failed, whose driver failed, that was interrupted, or in
// which every request failed is an error, whatever its gates say; a complete
// run is decided by its gates (Finalize evaluated them, and the reports show
// the verdicts), which are printed and written as JUnit.
func gate(cfg Config, sys IO, dir string, fin Finalized, d driven, interrupted bool) (*gates.Report, error) {
	switch {
	case d.recordErr != nil:
		return nil, fmt.Errorf("recording the run: %w", d.recordErr)
	case d.runErr != nil && !interrupted:
		return nil, fmt.Errorf("driving the load: %w", d.runErr)
	case interrupted:
		return nil, fmt.Errorf("%w: the results measured so far are in %s", ErrInterrupted, dir)
	}
	// A run in which nothing succeeded measured nothing about the engine.
	if r := fin.Summary.Client.Requests; r.Sent > 0 && r.OK == 0 {
		return nil, fmt.Errorf("every request failed (%d); see the error samples above and %s", r.Failed, filepath.Join(dir, rundir.RequestsFile))
	}
	if fin.Gates == nil {
		return nil, nil
	}
	junit := cfg.JUnit
	if junit == "" {
		junit = filepath.Join(dir, "junit.xml")
	}
	return fin.Gates, printGates(*fin.Gates, sys.Stdout, junit)
}

// gatesForRun checks the gates of a run about to start, the baseline they
// compare with, and where the JUnit report goes: before anything is sent,
// since a typo in one must not cost a whole benchmark.
func gatesForRun(cfg Config, g *scenarios.Gates, plan *workload.Plan) error {
	if g == nil && len(cfg.Thresholds) == 0 {
		return nil
	}
	if _, err := parseGates(cfg.Scenario, g, cfg.Thresholds, PhaseNames(plan)); err != nil {
		return err
	}
	if _, err := loadBaseline(cfg.Baseline); err != nil {
		return err
	}
	if cfg.JUnit != "" {
		if fi, err := os.Stat(filepath.Dir(cfg.JUnit)); err != nil || !fi.IsDir() {
			return configError(fmt.Errorf("--junit %s: its directory does not exist", cfg.JUnit))
		}
	}
	return nil
}

// loadBaseline loads the baseline run (nil when dir is "").
func loadBaseline(dir string) (*gates.Run, error) {
	if dir == "" {
		return nil, nil
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, configError(fmt.Errorf("--baseline: %w", err))
	}
	side, err := gates.LoadSide(dir)
	if err != nil {
		return nil, configError(fmt.Errorf("--baseline: %w", err))
	}
	return &side[0], nil
}

// reportSides evaluates gs over the two sides and prints the verdicts
// (printGates).
func reportSides(gs gates.Gates, cur, base gates.Side, o gates.Options, w io.Writer, junitPath string) (*gates.Report, error) {
	var b *gates.Run
	if len(base) > 0 {
		b = &base[0]
	}
	rep := gates.NewReport(cur[0], b, gs.EvaluateSides(cur, base, o))
	if len(cur) > 1 {
		rep.Run = fmt.Sprintf("%s and %d more trials", rep.Run, len(cur)-1)
	}
	if len(base) > 1 {
		rep.Baseline = fmt.Sprintf("%s and %d more runs", rep.Baseline, len(base)-1)
	}
	return &rep, printGates(rep, w, junitPath)
}

// printGates prints the gates' verdicts, writes them as JUnit XML when
// junitPath is set, and returns *GatesFailed when a gate failed or could not
// be evaluated.
func printGates(rep gates.Report, w io.Writer, junitPath string) error {
	if err := gates.RenderText(w, rep); err != nil {
		return err
	}
	if junitPath != "" {
		var buf bytes.Buffer
		if err := gates.RenderJUnit(&buf, rep); err != nil {
			return err
		}
		if err := rundir.WriteFile(junitPath, buf.Bytes()); err != nil {
			return fmt.Errorf("write JUnit report: %w", err)
		}
	}
	if !rep.Passed() {
		_, failed, unevaluable := rep.Counts()
		return &GatesFailed{Failed: failed, Unevaluable: unevaluable, Inconclusive: rep.Inconclusive()}
	}
	return nil
}

// readGates parses the scenario's thresholds (when the run directory has its
// scenario; only its gates section is read, so a run directory copied to
// another machine still gates) and the extra expressions, reporting every
// bad one with where it came from.
func readGates(dir string, extra []string) (gates.Gates, error) {
	path := filepath.Join(dir, rundir.ScenarioFile)
	var g *scenarios.Gates
	data, err := rundir.ReadFile(path)
	if err == nil {
		g, err = scenarios.ParseGates(path, data)
	} else {
		err = fmt.Errorf("load scenario: %w", err)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, configError(fmt.Errorf("read the gates of %s: %w", dir, err))
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
		return nil, configError(errors.Join(errs...))
	}
	return gs, nil
}
