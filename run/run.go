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
package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/version"
	"github.com/llmbench-org/llmbench/live"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/selfmetrics"
	"github.com/llmbench-org/llmbench/selfmon"
	"github.com/llmbench-org/llmbench/workload"
)

// Config is one run: the scenario and what to do with its results.
type Config struct {
	Scenario string   // path of the scenario file
	Sets     []string // FIELD=VALUE overrides of the scenario (--set)
	RunsDir  string   // parent of the run directory ("" = "runs")

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
	// MetricsAddr, when set, serves llmbench's own Prometheus /metrics there
	// during the run (package selfmetrics; "127.0.0.1:0" picks a port).
	MetricsAddr string
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

// GatesFailed is returned when the run worked but a gate failed or could not
// be evaluated (Cause: why none could, such as a run directory whose records
// do not load).
type GatesFailed struct {
	Failed, Unevaluable int
	Cause               error
}

func (e *GatesFailed) Error() string {
	msg := fmt.Sprintf("gates failed: %d failed, %d could not be evaluated", e.Failed, e.Unevaluable)
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

func (e *GatesFailed) Unwrap() error { return e.Cause }

// Run carries out cfg: see the package comment. The returned Result holds the
// run directory as soon as one was made, also with an error.
func Run(ctx context.Context, cfg Config, sys IO) (Result, error) {
	sys = sys.withDefaults()
	sc, plan, err := load(cfg.Scenario, cfg.Sets, sys.lookupEnv)
	if err != nil {
		return Result{}, err
	}
	if err := gatesForRun(cfg, sc.Gates, plan); err != nil {
		return Result{}, err
	}
	resolved, err := sc.Resolved()
	if err != nil {
		return Result{}, configError(err)
	}
	shardSuffix := ""
	if cfg.Shard != "" {
		var i, n int
		if _, err := fmt.Sscanf(cfg.Shard, "%d/%d", &i, &n); err != nil || fmt.Sprintf("%d/%d", i, n) != cfg.Shard {
			return Result{}, configError(fmt.Errorf("--shard %q: want i/n, e.g. 0/4", cfg.Shard))
		}
		if plan, err = plan.Shard(i, n); err != nil {
			return Result{}, configError(err)
		}
		shardSuffix = fmt.Sprintf("-shard%dof%d", i, n)
	}
	if err := checkStartAt(cfg.StartAt); err != nil {
		return Result{}, err
	}
	runsDir := cfg.RunsDir
	if runsDir == "" {
		runsDir = "runs"
	}

	reapLeftovers(runsDir, sys.Stderr)

	start := time.Now()
	runID := start.UTC().Format("20060102T150405Z") + "-" + sc.Name + shardSuffix
	rec, err := rundir.New(filepath.Join(runsDir, runID))
	if err != nil {
		return Result{}, err
	}
	view := live.NewWindow(start)
	res := Result{Dir: rec.Dir()}
	dir := res.Dir
	runID = filepath.Base(dir)
	if err := rec.WriteFile(rundir.ScenarioFile, resolved); err != nil {
		return res, err
	}

	apiKey := ""
	if sc.Engine.APIKeyEnv != "" {
		if apiKey = sys.Getenv(sc.Engine.APIKeyEnv); apiKey == "" {
			fmt.Fprintf(sys.Stderr, "llmbench: engine.api_key_env names %s, which is not set: sending no API key\n", sc.Engine.APIKeyEnv)
		}
	}
	eng, err := newEngine(sc, dir, apiKey, sys)
	if err != nil {
		return res, configError(err)
	}
	ep, err := startEngine(ctx, eng, cfg.Stop, sys.Stderr)
	if err != nil {
		return res, fmt.Errorf("start engine: %w", err)
	}
	defer func() {
		// A real engine may take a while to shut down (vLLM, SGLang); after
		// this it is killed.
		stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := eng.Stop(stopCtx); err != nil {
			fmt.Fprintf(sys.Stderr, "llmbench: stop engine: %v\n", err)
		}
	}()
	if ep.Model == "" {
		ep.Model = sc.Model
	}
	if sc.Engine.Kind == scenarios.KindSim && sc.Engine.Process != scenarios.ProcessInline && len(sys.Self) == 0 {
		ep.Notes = append(ep.Notes, "the built-in engine ran in this process, not apart (no llmbench executable was given to start it): its CPU and collector share the client's")
	}
	for _, n := range ep.Notes {
		fmt.Fprintf(sys.Stderr, "llmbench: engine: %s\n", n)
	}

	source := metricsSource(sc.Scrape, ep)
	if ep.Dialect == "" {
		// Engines join on the ids they are sent (SGLang's rid, vLLM's
		// request_id): a dialect found from /metrics is the engine's as much
		// as one the scenario names.
		ep.Dialect = detectDialect(ctx, source)
		if ep.Dialect != "" {
			note := fmt.Sprintf("dialect %s, detected from the metric names (engine.dialect sets it)", ep.Dialect)
			ep.Notes = append(ep.Notes, note)
			fmt.Fprintf(sys.Stderr, "llmbench: engine: %s\n", note)
		}
	}

	rq := sc.Request
	calibration := ""
	if rq.Calibrated() {
		plan, calibration = fitPrompts(ctx, plan, ep, rq.Endpoint, apiKey, dir, cfg.Stop, sys.Stderr)
	}

	shard, shards := plan.ShardOf()
	meta := &runMeta{RunMeta: rundir.RunMeta{
		Thresholds: cfg.Thresholds, Baseline: absPath(cfg.Baseline),
		ID: runID, Scenario: sc.Name, Description: sc.Description, Seed: sc.Seed, StartedAt: start, Version: version.String(), Shard: shard, Shards: shards, Host: hostname(),
		Engine: rundir.EngineMeta{Kind: sc.Engine.Kind, Dialect: ep.Dialect, BaseURL: ep.BaseURL, MetricsURL: ep.MetricsURL, Model: ep.Model, Notes: ep.Notes},
	}}
	meta.PromptCalibration = calibration
	if sc.Report != nil {
		meta.Percentiles = sc.Report.Percentiles
		view.SetPercentiles(sc.Report.Percentiles)
	}
	if o := sc.SLO; o != nil {
		meta.SLO = &rundir.SLO{TTFT: o.TTFT, TPOT: o.TPOT, E2E: o.E2E}
		view.SetSLO(*meta.SLO)
	}
	if err := meta.write(rec); err != nil {
		return res, err
	}

	conc := expectedConcurrency(plan)
	cl, err := client.New(client.Config{
		BaseURL: ep.BaseURL, APIKey: apiKey, Model: ep.Model, Dialect: ep.Dialect,
		Start: start, MaxConns: conc, IncludeUsage: true, Timeout: sc.Workload.Timeout,
		Endpoint: rq.Endpoint, NoStream: !rq.Streamed(), ExtraBody: rq.ExtraBody, Headers: rq.Headers,
	})
	if err != nil {
		return res, configError(err)
	}
	defer cl.Close()
	// Connections are opened before the measured phase, so the first requests
	// do not pay connection set-up inside their TTFT. A stop, or an engine
	// that does not answer within warmTimeout, ends the wait.
	if err := warm(ctx, cl, conc, cfg.Stop); err != nil {
		return res, fmt.Errorf("open connections to %s: %w", ep.BaseURL, err)
	}
	if err := startedLate(cfg.StartAt); err != nil {
		return res, err
	}

	view.SetDialect(ep.Dialect)
	records := make(chan client.Record, 1024)
	rows := make(chan scrape.Row, 64)
	consumed := make(chan error, 1)
	metricsCtx, stopMetrics := context.WithCancel(ctx)
	defer stopMetrics()
	own, err := serveSelfMetrics(metricsCtx, cfg.MetricsAddr, sys.Stderr)
	if err != nil {
		return res, err
	}
	go func() { consumed <- consume(records, own.tee(rows), rec, view) }()

	// Scrapes run until the driver is done, independent of an interrupt, so
	// the closing snapshot is still taken after an interrupted run drains.
	var scrapeWG sync.WaitGroup
	scrapeCtx, stopScrape := context.WithCancel(context.Background())
	defer stopScrape()
	switch src := source.(type) {
	case nil:
	case scrape.Targets: // each target on its own ticker: a slow one delays no other
		loop := scrape.Loop{Targets: src, Interval: sc.Scrape.Interval, Start: start}
		scrapeWG.Go(func() { loop.Run(scrapeCtx, rows) })
	default:
		scrapeWG.Go(func() { scrape.RunSource(scrapeCtx, src, sc.Scrape.Interval, start, rows) })
	}

	phases := newPhaseBook(plan, source, start, rows, meta, rec)
	phases.onStart = func(phase string) { view.SetPhase(phase); own.metrics.SetPhase(phase) }
	minTokens := slices.Contains(minTokensDialects, ep.Dialect)
	// The sender tells the driver each outcome, for abort conditions and
	// automatic sweeps.
	sender := workload.OutcomeSenderFunc(func(ctx context.Context, r workload.Request) workload.Outcome {
		view.Begin()
		own.metrics.Begin()
		record := cl.Do(ctx, clientRequest(r, minTokens))
		view.End()
		own.metrics.End()
		own.metrics.Observe(&record)
		phases.finished(&record)
		records <- record // the consumer drains until close: never lost, never stuck
		return workload.Outcome{OK: record.OK(), Canceled: record.ErrorClass == client.ErrCanceled,
			Unreachable: record.ErrorClass == client.ErrConnect}
	})
	driver := &workload.Driver{Plan: plan, Sender: sender, Start: start, OnPhase: phases.onPhase}

	// The collector is set up (a full collection first) before the wait: after
	// it, the collection would hold back the first arrivals by milliseconds.
	restoreGC, quietGC := selfmon.QuietGC(sys.Getenv)
	if err := waitForStart(ctx, cfg.StartAt, cfg.Stop, sys.Stderr, func() { phases.openFirst(ctx) }); err != nil {
		// Started late: what was recorded so far is written out, as when the
		// engine came up late (startedLate), and nothing is sent.
		stopScrape()
		scrapeWG.Wait()
		close(rows)
		close(records)
		<-consumed
		rec.Close()
		restoreGC()
		return res, err
	}
	live := Live{Scenario: sc.Name, RunDir: dir, Engine: fmt.Sprintf("%s (%s) %s", sc.Engine.Kind, orUnknown(ep.Dialect), ep.BaseURL),
		Planned: plannedDuration(plan), PlannedRequests: plannedRequests(plan), Phases: PhaseNames(plan), Progress: view.Progress}
	stopViews := startViews(cfg.Views, live)
	self0 := selfmon.Take()
	// A run directory that can no longer be written (a full disk) stops the
	// run: what it would measure from then on could not be kept.
	driveCtx, abortDrive := context.WithCancel(ctx)
	go func() {
		select {
		case <-rec.Broken():
			fmt.Fprintf(sys.Stderr, "llmbench: the run directory %s can no longer be written: stopping the run\n", dir)
			abortDrive()
		case <-driveCtx.Done():
		}
	}()
	var watching sync.WaitGroup
	watching.Go(func() { watchClient(driveCtx, view) })
	result, runErr := driver.Run(driveCtx, cfg.Stop)
	abortDrive()
	watching.Wait()
	self := selfmon.Since(self0, selfmon.Take())
	restoreGC()
	stopViews()

	stopScrape()
	scrapeWG.Wait()
	close(rows)
	close(records)
	consumeErr := <-consumed
	if err := rec.Close(); err != nil && consumeErr == nil {
		consumeErr = err
	}

	interrupted := closed(cfg.Stop) || ctx.Err() != nil
	meta.update(func(m *rundir.RunMeta) {
		for _, ph := range result.Phases {
			m.DroppedArrivals += ph.Dropped
			m.LateArrivals += ph.Late
			// The load each phase offered as the driver ran it (an
			// automatic sweep chooses its rates at run time).
			if i := phaseIndex(m, ph.Name); i >= 0 {
				switch {
				case ph.Rate > 0:
					m.Phases[i].Load, m.Phases[i].LoadUnit = ph.Rate, "requests/s"
				case ph.Concurrency > 0:
					m.Phases[i].Load, m.Phases[i].LoadUnit = float64(ph.Concurrency), "users"
				}
				m.Phases[i].Planned = phasePlanned(plan, ph, result.Stop == workload.StopCompleted)
			}
		}
		m.Client = rundir.ClientHealth{
			CPUCores: self.Cores, CPUUtilization: self.CPUUtilization,
			SchedLatencyP99_s: self.SchedLatencyP99.Seconds(), Saturated: self.Saturated(), Delay: self.Delay(),
			GCCycles: self.GCCycles, GCPolicy: "GOGC/GOMEMLIMIT from the environment",
		}
		if self.HostMeasured {
			m.Client.HostOtherCPU = &self.HostOtherCPU
		}
		if self.CgroupMeasured {
			if self.CPUQuota > 0 {
				m.Client.CPUQuota = &self.CPUQuota
			}
			m.Client.ThrottledPeriods, m.Client.Throttled_s = self.ThrottledPeriods, self.Throttled.Seconds()
		}
		if quietGC {
			m.Client.GCPolicy = fmt.Sprintf("collect when garbage reaches the live heap or %d MiB, whichever is more (GOGC=off, a memory limit that follows the live heap)", selfmon.GarbageAllowance>>20)
		}
		// The run wrote its end: a run directory without it was cut short
		// (llmbench killed), which its report then says.
		m.Ended = time.Now()
		switch {
		case interrupted:
			m.Stopped = "interrupted"
		case result.Stop != workload.StopCompleted && result.Stop != "":
			m.Stopped = string(result.Stop)
			if result.Reason != "" {
				m.Stopped += ": " + result.Reason
			}
		}
	})
	if err := meta.write(rec); err != nil {
		return res, err
	}
	fin, err := finalize(dir, sys.Stdout, cfg.Verbose)
	if err != nil {
		return res, err
	}
	res.Summary = fin.Summary
	fmt.Fprintf(sys.Stdout, "run directory: %s\n", dir)

	switch {
	case consumeErr != nil:
		return res, fmt.Errorf("recording the run: %w", consumeErr)
	case runErr != nil && !interrupted:
		return res, fmt.Errorf("driving the load: %w", runErr)
	case interrupted:
		return res, fmt.Errorf("%w: the results measured so far are in %s", ErrInterrupted, dir)
	}
	// A run in which nothing succeeded measured nothing about the engine.
	if r := res.Summary.Client.Requests; r.Sent > 0 && r.OK == 0 {
		return res, fmt.Errorf("every request failed (%d); see the error samples above and %s", r.Failed, filepath.Join(dir, rundir.RequestsFile))
	}
	// Gates decide the outcome of a complete run; Finalize evaluated them
	// (the reports show the verdicts).
	if fin.Gates != nil {
		junit := cfg.JUnit
		if junit == "" {
			junit = filepath.Join(dir, "junit.xml")
		}
		res.Gates = fin.Gates
		return res, printGates(*fin.Gates, sys.Stdout, junit)
	}
	return res, nil
}

// selfMetrics is llmbench's own /metrics during a run; the zero value is
// none (its methods do nothing).
type selfMetrics struct{ metrics *selfmetrics.Metrics }

// serveSelfMetrics serves llmbench's own metrics at addr ("" = none) until
// ctx ends.
func serveSelfMetrics(ctx context.Context, addr string, log io.Writer) (selfMetrics, error) {
	if addr == "" {
		return selfMetrics{}, nil
	}
	m := selfmetrics.New()
	bound, err := m.Serve(ctx, addr)
	if err != nil {
		return selfMetrics{}, fmt.Errorf("serve llmbench's own metrics at %s: %w", addr, err)
	}
	fmt.Fprintf(log, "llmbench: its own metrics at http://%s/metrics\n", bound)
	return selfMetrics{m}, nil
}

// tee passes rows on, counting each scrape's outcome on the way; without
// metrics it is rows itself.
func (s selfMetrics) tee(rows <-chan scrape.Row) <-chan scrape.Row {
	if s.metrics == nil {
		return rows
	}
	out := make(chan scrape.Row, cap(rows))
	go func() {
		defer close(out)
		for r := range rows {
			s.metrics.ObserveScrape(r.OK)
			out <- r
		}
	}()
	return out
}

// warmTimeout bounds opening the connections before the run.
const warmTimeout = time.Minute

// warm opens n connections, within warmTimeout, unless stop closes first.
func warm(ctx context.Context, cl *client.Client, n int, stop <-chan struct{}) error {
	ctx, cancel := context.WithTimeoutCause(ctx, warmTimeout, fmt.Errorf("no answer within %s", warmTimeout))
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		select {
		case <-stop:
			close(stopped)
			cancel()
		case <-ctx.Done():
		}
	}()
	err := cl.Warm(ctx, n)
	select {
	case <-stopped:
		return fmt.Errorf("%w while opening connections", ErrInterrupted)
	default:
	}
	if err != nil && context.Cause(ctx) != nil && ctx.Err() != nil {
		return fmt.Errorf("%w: %w", context.Cause(ctx), err)
	}
	return err
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

// closed reports whether ch is closed (a nil channel never is).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return ch != nil
	default:
		return false
	}
}

// startViews runs each view in its own goroutine; the returned function ends
// them and waits until they have returned.
func startViews(views []View, live Live) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, v := range views {
		wg.Go(func() { v(ctx, live) })
	}
	return func() { cancel(); wg.Wait() }
}

// minTokensDialects are the engines that take min_tokens beside ignore_eos
// (vLLM's and SGLang's sampling parameters): asking for both makes the length
// exact there. Others are sent ignore_eos alone (an unknown field may be
// refused).
var minTokensDialects = []string{"vllm", "sglang"}

// clientRequest is the client's view of a planned request; with minTokens,
// a request that must run to max_tokens asks for it as its minimum too.
func clientRequest(r workload.Request, minTokens bool) client.Request {
	if minTokens && r.IgnoreEOS && r.MinTokens == 0 {
		r.MinTokens = r.MaxTokens
	}
	msgs := make([]client.Message, len(r.Messages))
	for i, m := range r.Messages {
		msgs[i] = client.Message{Role: m.Role, Content: m.Content}
	}
	return client.Request{ID: r.ID, Index: r.Index, Phase: r.Phase, Intended: r.Intended, Messages: msgs,
		PromptTokens: r.PromptTokens, MaxTokens: r.MaxTokens, MinTokens: r.MinTokens, IgnoreEOS: r.IgnoreEOS}
}

// plannedDuration is the plan's total duration when every phase has one (0 = unknown).
func plannedDuration(plan *workload.Plan) time.Duration {
	var d time.Duration
	for _, ph := range plan.Phases() {
		if ph.Duration <= 0 {
			return 0
		}
		d += ph.Duration
	}
	return d
}

// plannedRequests is the plan's request count when every phase is bounded by
// one (0 = unknown: some phase runs for a time instead).
func plannedRequests(plan *workload.Plan) int {
	n := 0
	for _, ph := range plan.Phases() {
		if ph.Requests <= 0 || ph.Duration > 0 {
			return 0
		}
		n += ph.Requests
	}
	return n
}

func orUnknown(s string) string {
	if s == "" {
		return "dialect unknown"
	}
	return s
}

// expectedConcurrency is how many connections the plan will keep busy at most:
// closed-loop users, or for an open loop about a second's worth of arrivals
// (the transport opens more on demand; this only decides what is opened early).
func expectedConcurrency(plan *workload.Plan) int {
	n := 1
	for _, ph := range plan.Phases() {
		if ph.Open() {
			n = max(n, min(int(math.Ceil(ph.Rate)), 1024))
		} else {
			n = max(n, ph.Concurrency)
		}
	}
	return n
}

// runMeta guards the run's RunMeta, which the driver's phase hook and the run
// itself both update.
type runMeta struct {
	mu sync.Mutex
	rundir.RunMeta
}

func (m *runMeta) update(fn func(*rundir.RunMeta)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fn(&m.RunMeta)
}

func (m *runMeta) write(rec *rundir.Writer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return rec.WriteJSON(rundir.RunFile, m.RunMeta)
}

// phasePlanned is how many requests a phase offered by its plan: its request
// count, or for an open loop that ran to its end every arrival, sent or
// dropped; 0 where the plan sets no number (closed-loop users for a time,
// or a count and a time, whichever comes first) or the run was cut short.
// A comparison tells by it a run that planned fewer requests from one that
// served fewer.
func phasePlanned(plan *workload.Plan, res workload.PhaseResult, completed bool) int {
	for _, ph := range plan.Phases() {
		if ph.Name != res.Name {
			continue
		}
		switch {
		case ph.Requests > 0 && ph.Duration <= 0:
			return ph.Requests
		case ph.Open() && completed:
			return res.Sent + res.Dropped
		}
	}
	return 0
}
