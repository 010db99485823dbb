// Package run carries out one benchmark run end to end: it loads the
// scenario, starts (or finds) the engine, opens connections, drives the
// phases through the client, scrapes the engine's metrics, settles each
// phase's closing snapshot, records everything in a run directory and
// finalizes it into summary.json, report.html, report.md and the text
// summary. Finalize is the one way any run directory, from a run, a rebuilt
// report or merged shards, becomes those files.
//
// It parses no flags and renders nothing itself: the command line (or any Go
// program) fills a Config, hands it the outside world as an IO, watches the
// run through Views and turns the Result and error into what it needs.
//
// Run reads as its stages, each a function of its own: load (loadRun),
// engine (bringUpEngine), calibrate (calibrated), warm (warmUp), drive
// (drive, which ends with the measurement's one teardown), settle, finalize
// and gate. What the load measures, every finished request and every scrape
// row, fans out from one consumer goroutine to Sinks: the run directory and
// the live view, llmbench's own /metrics, and any in Config.Sinks
// (docs/decisions/0028).
package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/llmbench-org/llmbench/live"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
)

// Config is one run: the scenario and what to do with its results.
type Config struct {
	Scenario string   // path of the scenario file
	Sets     []string // FIELD=VALUE overrides of the scenario (--set)
	RunsDir  string   // parent of the run directory ("" = "runs")
	// Flags, when set, is the scenario instead of the file: the one the
	// command line's --url and load flags build (scenarios.FromFlags).
	Flags *scenarios.Flags

	Baseline   string   // a run directory or summary.json for baseline and regression gates
	Thresholds []string // gates beyond the scenario's
	JUnit      string   // where the gates' JUnit report goes ("" = junit.xml in the run directory)
	Shard      string   // "i/n": send only shard i of n of the plan ("" = all)
	// StartAt, when set, holds the measured load until the wall clock reads
	// it, with the engine up and connections open: the start barrier that
	// makes n shards start together (all given the same instant). The first
	// phase's opening /metrics snapshot is taken while it waits, so its
	// arrivals begin at StartAt, not a scrape later. A time more than
	// StartLateness past is an error.
	StartAt time.Time

	// Stop, when closed, stops arrivals and lets the requests in flight
	// finish: the first stage of a two-stage stop. Cancelling Run's context
	// is the second: it aborts the requests in flight. What was measured is
	// written and summarised either way.
	Stop <-chan struct{}
	// Views watch the run while the load runs; each is called in its own
	// goroutine and must return once its context is done.
	Views []View
	// Verbose prints the findings whole in the text summary (the reports
	// always have them whole).
	Verbose bool
	// Width is the text summary's width in columns (0: the terminal's, at
	// most 100; CheckWidth).
	Width int
	// MetricsAddr, when set, serves llmbench's own Prometheus /metrics there
	// during the run (package selfmetrics; "127.0.0.1:0" picks a port).
	MetricsAddr string
	// Sinks receive every finished request and scrape row beside the run
	// directory, the live view and MetricsAddr's exporter (a Go program's
	// own output); one that is also a RequestObserver or PhaseObserver hears
	// of requests and phases too. Run closes each once before it returns; the
	// first error one returns stops the run, as a full disk does.
	Sinks []Sink

	// trial places the run in a trial set (Repeat, Interleave): its run
	// directory and which trial it is; zero for a run of its own.
	trial trialSlot
}

// View is a subscriber to a run's progress (the live TUI, plain progress
// lines): it reads Live until ctx is done. It drives nothing.
type View func(ctx context.Context, live Live)

// Live is what a run publishes while the load runs.
type Live struct {
	Scenario, RunDir, Engine string
	Planned                  time.Duration // the plan's duration; 0 = unknown
	PlannedRequests          int           // the requests the plan sends when every phase is bounded by a count; 0 = unknown
	Phases                   []string      // the plan's phases in order
	// Trial says which trial of a trial set this run is ("trial 2 of 3",
	// "B: trial 2 of 3"); "" for a run of its own.
	Trial string
	// Progress is a snapshot of the run so far; safe from any goroutine.
	Progress func() live.Progress
}

// IO is everything a run touches of the process around it, so that a test
// or a Go program runs a scenario without one.
type IO struct {
	Stdout, Stderr io.Writer
	// Getenv is the environment: the API key variable, GOGC, and the
	// scenario's ${VAR} references (nil: an empty environment).
	Getenv func(string) string
	// Self is the command line that runs llmbench itself, to which run
	// appends "serve …" to start the built-in engine in a child process
	// (the command sets it to its own executable). Without it, the built-in
	// engine runs in this process, and the run's notes say so.
	Self []string
	// SelfEnv is added to that child's environment.
	SelfEnv []string
}

// lookupEnv is the environment as ${VAR} in a scenario reads it: a variable
// set to "" counts as unset.
func (o IO) lookupEnv(name string) (string, bool) {
	v := o.Getenv(name)
	return v, v != ""
}

func (o IO) withDefaults() IO {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	// What a run prints may quote the engine (a model id, an error body):
	// no secret and no terminal escape from it reaches the screen.
	o.Stdout, o.Stderr = redact.SafeWriter(o.Stdout), redact.SafeWriter(o.Stderr)
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	return o
}

// Result is what a run left.
type Result struct {
	Dir     string         // the run directory ("" when none was made)
	Summary report.Summary // the finalized summary (zero when the run did not get that far)
	Gates   *gates.Report  // the gates' verdicts; nil without gates
}

// ErrInterrupted is returned (wrapped) when Stop or a cancelled context ended
// the run early; what was measured is still written and summarised.
var ErrInterrupted = errors.New("interrupted")

// ConfigError is a run the user must fix before it can start: a scenario
// that does not load, a bad gate, shard or baseline.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func configError(err error) error {
	if err == nil {
		return nil
	}
	var ce *ConfigError
	if errors.As(err, &ce) {
		return err
	}
	return &ConfigError{Err: err}
}

// GatesFailed is returned when the run worked but a gate failed, could not
// be evaluated, or was inconclusive (Cause: why none could be evaluated,
// such as a run directory whose records do not load). Decisive reports
// whether a gate failed or could not be evaluated: a fail dominates; the
// rest only lacked the evidence to decide (exit 4, not 3).
type GatesFailed struct {
	Failed, Unevaluable, Inconclusive int
	Cause                             error
}

// Decisive reports whether a gate failed or could not be evaluated, as
// opposed to gates that were only inconclusive.
func (e *GatesFailed) Decisive() bool { return e.Failed > 0 || e.Unevaluable > 0 }

func (e *GatesFailed) Error() string {
	if !e.Decisive() {
		return fmt.Sprintf("gates inconclusive: %d could not be decided from the evidence (each says what would decide it)", e.Inconclusive)
	}
	msg := fmt.Sprintf("gates failed: %d failed, %d could not be evaluated", e.Failed, e.Unevaluable)
	if e.Inconclusive > 0 {
		msg += fmt.Sprintf(", %d inconclusive", e.Inconclusive)
	}
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

func (e *GatesFailed) Unwrap() error { return e.Cause }

// Run carries out cfg: see the package comment. The returned Result holds the
// run directory as soon as one was made, also with an error. It goes through
// the stages in order: load, engine, calibrate, warm, drive, settle,
// finalize, gate; the drive ends with the one teardown of the measurement
// (measuring.stop).
func Run(ctx context.Context, cfg Config, sys IO) (Result, error) {
	sys = sys.withDefaults()
	// What the run starts in the background (its own /metrics server) ends
	// when it returns.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The outputs are closed by the drive's teardown; this close only acts
	// when the run ends before it.
	outs := newOutputs(cfg.Sinks...)
	defer outs.close()

	if err := CheckWidth(cfg.Width); err != nil {
		return Result{}, err
	}
	ld, err := loadRun(cfg, sys)
	if err != nil {
		return Result{}, err
	}
	if err := cfg.trial.sameScenario(ld); err != nil {
		return Result{}, err
	}
	reapLeftovers(ld.runsDir, sys.Stderr)
	start := time.Now()
	rd, err := createRecording(cfg.trial.runDir(ld, start), start)
	if err != nil {
		return Result{}, err
	}
	rd.addTo(outs)
	res := Result{Dir: rd.Dir()}
	if err := rd.WriteFile(rundir.ScenarioFile, ld.resolved); err != nil {
		return res, err
	}

	up, err := bringUpEngine(ctx, cfg.Stop, ld.sc, res.Dir, sys)
	if err != nil {
		return res, err
	}
	defer up.stop(sys.Stderr)
	plan, calibration := calibrated(ctx, cfg.Stop, ld.sc.Request, ld.plan, up, res.Dir, sys.Stderr)
	meta := newRunMeta(cfg, ld.sc, plan, up.ep, start, res.Dir, calibration, rd)
	if err := meta.write(); err != nil {
		return res, err
	}
	cl, err := warmUp(ctx, cfg, ld.sc, plan, up, start, meta, sys.Stderr)
	if err != nil {
		return res, err
	}
	defer cl.Close()

	if cfg.MetricsAddr != "" {
		own, err := serveOwnMetrics(ctx, cfg.MetricsAddr, sys.Stderr)
		if err != nil {
			return res, err
		}
		outs.add(own)
	}
	lv := newLive(ld.sc, up.ep, plan, res.Dir, rd)
	lv.Trial = cfg.trial.label
	d, err := drive(ctx, cfg, sys, driving{
		plan: plan, start: start, client: cl, minTokens: takesMinTokens(up.ep.Dialect),
		source: up.source, scrapeEvery: ld.sc.Scrape.Interval, meta: meta, rec: rd, outs: outs,
		live: lv, decisions: newDecisions(ld.sc, plan, meta), stall: ld.sc.Workload.StallTimeout,
		between: newBetweenPhases(ld.sc, up.ep).showing(rd.view).withKey(up.apiKey), images: prepareImages(ctx, plan, imageBankBudget),
	})
	if err != nil {
		return res, err
	}

	interrupted := closed(cfg.Stop) || ctx.Err() != nil
	up.lateNotes(meta, sys.Stderr)
	if err := settle(meta, plan, d, interrupted); err != nil {
		return res, err
	}
	fin, err := finalize(res.Dir, sys.Stdout, cfg.Verbose, cfg.Width)
	if err != nil {
		return res, err
	}
	res.Summary = fin.Summary // its text ended with the run directory
	res.Gates, err = gate(cfg, sys, res.Dir, fin, d, interrupted)
	return res, err
}

// closed reports whether ch is closed (a nil channel never is).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return ch != nil
	default:
		return false
	}
}

// absPath is path made absolute (as it is when that fails; "" stays "").
func absPath(path string) string {
	if path == "" {
		return ""
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
