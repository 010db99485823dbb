package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/validity"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
)

// trialSlot places one run in a trial set: the run directory it is made in
// and the words the live view shows for it.
type trialSlot struct {
	dir   string // the trial's run directory; "" for a run of its own
	label string // "trial 2 of 3", "B: trial 2 of 3"
	// resolved is the scenario as the set's first load resolved it: every
	// trial must run the same (a scenario file edited while a set runs
	// would make its trials different experiments).
	resolved []byte
}

// sameScenario checks that the trial loaded the scenario its set began
// with.
func (t trialSlot) sameScenario(ld loaded) error {
	if t.resolved == nil || bytes.Equal(t.resolved, ld.resolved) {
		return nil
	}
	return configError(fmt.Errorf("%s: the scenario (its file, or the ${VAR}s it reads) changed since the trial set began: its trials would not run the same plan", ld.sc.Name))
}

// runDir is where the run's directory goes: the trial's own place, or a new
// one named by its start time and scenario under the runs directory.
func (t trialSlot) runDir(ld loaded, start time.Time) string {
	if t.dir != "" {
		return t.dir
	}
	return ld.runDir(start)
}

// trialSet is one trial set being written (docs/decisions/0037): its
// directory, and the trials that left a run directory, in the order they
// ran. trials.json is rewritten after every trial, so that it lists what
// exists however the set ends.
type trialSet struct {
	dir      string
	side     string // "A" or "B" in an interleaved pair; "" alone
	n        int    // the trials planned
	resolved []byte // the scenario every trial must run (trialSlot.resolved)
	names    []string
	runs     []Result
}

// makeSetDir creates the directory of a trial set (or of an A/B pair) at
// path, or at path-2, path-3, … when that exists, as run directories are
// named.
func makeSetDir(path string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("create runs directory: %w", err)
	}
	dir := path
	for n := 2; ; n++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) || n > 1000 {
			return "", fmt.Errorf("create trial set directory: %w", err)
		}
		dir = fmt.Sprintf("%s-%d", path, n)
	}
}

// shareOwnMetrics serves llmbench's own /metrics at addr ("" = none)
// once for all the trials of cfgs until ctx ends, and returns cfgs with the
// exporter as a sink of every trial instead: one address serving
// throughout, where a server per trial would close and rebind the port
// between trials (and a scraper would see it gone).
func shareOwnMetrics(ctx context.Context, addr string, sys IO, cfgs ...*Config) error {
	if addr == "" {
		return nil
	}
	own, err := serveOwnMetrics(ctx, addr, sys.Stderr)
	if err != nil {
		return configError(err)
	}
	for _, cfg := range cfgs {
		cfg.MetricsAddr = ""
		cfg.Sinks = append(slices.Clip(cfg.Sinks), own)
	}
	return nil
}

// label is what the live view and the headlines call trial k.
func (s *trialSet) label(k int) string {
	l := fmt.Sprintf("trial %d of %d", k, s.n)
	if s.side != "" {
		l = s.side + ": " + l
	}
	return l
}

// runTrial runs trial k (from 1) of the set into its own run directory,
// records it in trials.json and prints its headline figures. The trial's
// full text summary is not printed (its report.md holds it, and `llmbench
// report` prints it): N of them would bury the spread that the set is for.
// Each trial writes its own junit.xml; the set's gates write cfg.JUnit.
func (s *trialSet) runTrial(ctx context.Context, cfg Config, sys IO, k int) (Result, error) {
	cfg.trial = trialSlot{dir: filepath.Join(s.dir, fmt.Sprintf("trial-%d", k)), label: s.label(k), resolved: s.resolved}
	cfg.JUnit = ""
	quiet := sys
	quiet.Stdout = io.Discard
	res, err := Run(ctx, cfg, quiet)
	if res.Dir != "" && isRunDir(res.Dir) {
		s.names = append(s.names, filepath.Base(res.Dir))
		s.runs = append(s.runs, res)
		if werr := rundir.WriteTrials(s.dir, s.names); werr != nil && err == nil {
			err = fmt.Errorf("record the trial set: %w", werr)
		}
	}
	if res.Summary.Schema != "" {
		fmt.Fprintf(sys.Stdout, "%s (%s): %s\n", s.label(k), filepath.Base(res.Dir), headline(res.Summary))
	}
	return res, err
}

// endsSet reports whether a trial's error ends the set: everything but
// its own gates failing does (an interrupt, a failed engine, a run in which
// every request failed), as it ends a single run. A trial's gates are not
// the set's verdict: the set's gates are evaluated over all its trials.
func endsSet(err error) bool {
	var gf *GatesFailed
	return err != nil && !errors.As(err, &gf)
}

// ended wraps the error that ended the set at trial k with what is left.
func (s *trialSet) ended(err error, k int) error {
	return fmt.Errorf("%s: %w (%s in %s lists the %d trials that left a run directory)",
		s.label(k), err, rundir.TrialsFile, s.dir, len(s.names))
}

// told reports whether the run was told to stop: no further trial
// starts.
func told(ctx context.Context, stop <-chan struct{}) bool {
	return closed(stop) || ctx.Err() != nil
}

// stoppedBefore is the interrupt that came before trial k started.
func (s *trialSet) stoppedBefore(k int) error {
	return fmt.Errorf("%w before %s: %s in %s lists the %d trials that ran",
		ErrInterrupted, s.label(k), rundir.TrialsFile, s.dir, len(s.names))
}

func isRunDir(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, rundir.RunFile))
	return err == nil && fi.Mode().IsRegular()
}

// sharingNote says what the trials share of the engine, so that a reader
// knows whether state (a prefix cache, a warm engine) could carry from one
// trial into the next.
func sharingNote(sc scenarios.Scenario) string {
	switch sc.Engine.Kind {
	case scenarios.KindSim:
		return "each trial starts the built-in engine afresh: no prefix cache, queue or KV state carries from one trial into the next"
	case scenarios.KindLaunch:
		return "each trial launches the engine afresh (and waits for it to load): no engine state carries from one trial into the next"
	}
	return fmt.Sprintf("the trials share the external engine at %s: what it keeps between requests (its prefix cache, warm state) carries from one trial into the next", sc.Engine.BaseURL)
}

// hasGates reports whether a run of cfg with scenario sc has gates.
func hasGates(cfg Config, sc scenarios.Scenario) bool {
	return (sc.Gates != nil && len(sc.Gates.Thresholds) > 0) || len(cfg.Thresholds) > 0
}

// headline is a trial's figures in one line: the client's TTFT, ITL and
// E2E at p50 and p99, throughput, and validity.
func headline(s report.Summary) string {
	var b strings.Builder
	for i, m := range spreadMetrics[:3] {
		if i > 0 {
			b.WriteString(" · ")
		}
		d := m.dist(s)
		fmt.Fprintf(&b, "%s p50 %s p99 %s", m.name, seconds(d.N, d.P50), seconds(d.N, d.P99))
	}
	t := s.Client.Throughput
	r := s.Client.Requests
	fmt.Fprintf(&b, " · %.2f req/s, %.1f output tok/s · %d of %d requests ok · %s",
		t.RequestsPerSec, t.OutputTokensPerSec, r.OK, r.Sent, validWord(s.Health))
	return b.String()
}

func validWord(h report.Health) string {
	if h.Valid {
		return "valid"
	}
	// The invalid states by name: the trial's report says each in full.
	var names []string
	for _, st := range h.States {
		if st.Severity == validity.Invalid {
			names = append(names, st.Name)
		}
	}
	if len(names) == 0 {
		return "NOT VALID"
	}
	return "NOT VALID (" + strings.Join(names, ", ") + ")"
}

// seconds writes a latency in milliseconds below a second, in seconds
// above; "–" when nothing was measured.
func seconds(n int, s float64) string {
	switch {
	case n == 0:
		return "–"
	case s < 1:
		return fmt.Sprintf("%.1f ms", s*1000)
	}
	return fmt.Sprintf("%.2f s", s)
}

// spreadMetric is one latency the headlines and the spread show.
type spreadMetric struct {
	name string
	dist func(report.Summary) report.Dist
}

var spreadMetrics = []spreadMetric{
	{"TTFT", func(s report.Summary) report.Dist { return s.Client.Latency.TTFT }},
	{"ITL", func(s report.Summary) report.Dist { return s.Client.Latency.ITL }},
	{"E2E", func(s report.Summary) report.Dist { return s.Client.Latency.E2E }},
}

// printSpread prints how the set's trials' headline figures spread
// (PrintSpread).
func (s *trialSet) printSpread(w io.Writer) {
	title := "spread"
	if s.side != "" {
		title = s.side + " spread"
	}
	sums := make([]report.Summary, len(s.runs))
	for i, r := range s.runs {
		sums[i] = r.Summary
	}
	PrintSpread(w, title, sums)
}

// PrintSpread prints how the trials' headline figures spread: min, median
// and max of TTFT, ITL and E2E p50 and p99 and of the throughput, over the
// trials that were summarised (a zero Summary is left out), and how many
// were valid; nothing for fewer than two. A spread says how far identical
// runs differed here; deciding whether two sets differ beyond it is the
// gates' and compare's (their noise model), not this table's.
func PrintSpread(w io.Writer, title string, trials []report.Summary) {
	var runs []report.Summary
	for _, s := range trials {
		if s.Schema != "" {
			runs = append(runs, s)
		}
	}
	if len(runs) < 2 {
		return
	}
	fmt.Fprintf(w, "%s over %d trials:\n", title, len(runs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\t min\t median\t max")
	row := func(name string, format func(float64) string, get func(report.Summary) (float64, bool)) {
		var xs []float64
		for _, r := range runs {
			if x, ok := get(r); ok {
				xs = append(xs, x)
			}
		}
		if len(xs) == 0 {
			fmt.Fprintf(tw, "  %s\t –\t –\t –\n", name)
			return
		}
		slices.Sort(xs)
		fmt.Fprintf(tw, "  %s\t %s\t %s\t %s\n", name, format(xs[0]), format(median(xs)), format(xs[len(xs)-1]))
	}
	ms := func(x float64) string { return seconds(1, x) }
	for _, m := range spreadMetrics {
		row(m.name+" p50", ms, func(s report.Summary) (float64, bool) { d := m.dist(s); return d.P50, d.N > 0 })
		row(m.name+" p99", ms, func(s report.Summary) (float64, bool) { d := m.dist(s); return d.P99, d.N > 0 })
	}
	row("requests/s", func(x float64) string { return fmt.Sprintf("%.2f", x) },
		func(s report.Summary) (float64, bool) { return s.Client.Throughput.RequestsPerSec, true })
	row("output tok/s", func(x float64) string { return fmt.Sprintf("%.1f", x) },
		func(s report.Summary) (float64, bool) { return s.Client.Throughput.OutputTokensPerSec, true })
	valid := 0
	for _, r := range runs {
		if r.Health.Valid {
			valid++
		}
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "  valid in %d of %d trials\n", valid, len(runs))
}

// median of sorted xs.
func median(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
