package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine"
	"github.com/llmbench-org/llmbench/engine/launch"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/gates"
	reporthtml "github.com/llmbench-org/llmbench/report/html"
	"github.com/llmbench-org/llmbench/report/tui"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/scrape/promapi"
	"github.com/llmbench-org/llmbench/selfmon"
	"github.com/llmbench-org/llmbench/workload"
)

type runOpts struct {
	scenario   string
	runsDir    string        // parent of the run directory
	output     string        // auto | tui | plain
	every      time.Duration // plain progress line interval
	baseline   string        // a run directory or summary.json for baseline gates
	thresholds []string      // gates beyond the scenario's
	junit      string        // where the gates' JUnit report goes ("" = the run directory's junit.xml)
	shard      string        // "i/n": send only shard i of n of the plan ("" = all)
	sets       []string      // --set FIELD=VALUE overrides of the scenario
}

func newRunCmd(cio *cliIO) *cobra.Command {
	opts := runOpts{}
	cmd := &cobra.Command{
		Use:   "run SCENARIO.yaml",
		Short: "Run a scenario: start or find the engine, drive the load, scrape /metrics, report",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.scenario = args[0]
			switch opts.output {
			case "auto", "tui", "plain":
			default:
				return usageError(fmt.Errorf("--output must be auto, tui or plain, not %q", opts.output))
			}
			_, err := runScenario(cmd.Context(), opts, cio)
			return err
		},
	}
	cmd.Flags().StringVar(&opts.runsDir, "runs", "runs", "directory under which the run directory is created")
	cmd.Flags().StringVar(&opts.output, "output", "auto", "live view: auto (TUI on a terminal, plain lines otherwise), tui, plain")
	cmd.Flags().DurationVar(&opts.every, "every", 2*time.Second, "interval of plain progress lines")
	cmd.Flags().StringVar(&opts.baseline, "baseline", "", "a previous run directory (or summary.json) for baseline and regression gates")
	cmd.Flags().StringArrayVar(&opts.thresholds, "threshold", nil, "a gate to check besides the scenario's gates.thresholds (repeatable), e.g. \"client.ttft.p99 < 500ms\"")
	cmd.Flags().StringVar(&opts.shard, "shard", "", "i/n: send only shard i (0-based) of n of the plan, for n load generators on n machines (merge their runs with llmbench merge)")
	cmd.Flags().StringVar(&opts.junit, "junit", "", "write the gates' JUnit report here (default: junit.xml in the run directory)")
	addSetFlag(cmd, &opts.sets)
	return cmd
}

// errInterrupted is returned when Ctrl-C ended the run early; what was measured
// is still written and summarised.
var errInterrupted = errors.New("interrupted")

// runScenario runs one scenario and returns its run directory. It wires the
// packages: engine → scrape loop + driver → recorder → summary.
func runScenario(ctx context.Context, opts runOpts, cio *cliIO) (string, error) {
	sc, plan, err := loadPlan(opts.scenario, opts.sets)
	if err != nil {
		return "", err
	}
	gs, base, err := gatesForRun(sc, plan, opts)
	if err != nil {
		return "", err
	}
	resolved, err := sc.Resolved()
	if err != nil {
		return "", usageError(err)
	}
	shardSuffix := ""
	if opts.shard != "" {
		var i, n int
		if _, err := fmt.Sscanf(opts.shard, "%d/%d", &i, &n); err != nil || fmt.Sprintf("%d/%d", i, n) != opts.shard {
			return "", usageError(fmt.Errorf("--shard %q: want i/n, e.g. 0/4", opts.shard))
		}
		if plan, err = plan.Shard(i, n); err != nil {
			return "", usageError(err)
		}
		shardSuffix = fmt.Sprintf("-shard%dof%d", i, n)
	}

	start := time.Now()
	runID := start.UTC().Format("20060102T150405Z") + "-" + sc.Name + shardSuffix
	rec, err := report.NewRecorder(filepath.Join(opts.runsDir, runID), start)
	if err != nil {
		return "", err
	}
	dir := rec.Dir()
	runID = filepath.Base(dir)
	if err := rec.WriteFile(report.ScenarioFile, resolved); err != nil {
		return dir, err
	}

	apiKey := ""
	if sc.Engine.APIKeyEnv != "" {
		if apiKey = cio.getenv(sc.Engine.APIKeyEnv); apiKey == "" {
			fmt.Fprintf(cio.stderr, "llmbench: engine.api_key_env names %s, which is not set: sending no API key\n", sc.Engine.APIKeyEnv)
		}
	}
	eng, err := newEngine(sc, dir, apiKey)
	if err != nil {
		return dir, usageError(err)
	}
	ep, err := startEngine(ctx, eng, cio)
	if err != nil {
		return dir, fmt.Errorf("start engine: %w", err)
	}
	defer func() {
		// A real engine may take a while to shut down (vLLM, SGLang); after
		// this it is killed.
		stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := eng.Stop(stopCtx); err != nil {
			fmt.Fprintf(cio.stderr, "llmbench: stop engine: %v\n", err)
		}
	}()
	if ep.Model == "" {
		ep.Model = sc.Model
	}
	for _, n := range ep.Notes {
		fmt.Fprintf(cio.stderr, "llmbench: engine: %s\n", n)
	}

	shard, shards := plan.ShardOf()
	meta := &runMeta{RunMeta: report.RunMeta{
		ID: runID, Scenario: sc.Name, Description: sc.Description, Seed: sc.Seed, StartedAt: start, Version: buildVersion(), Shard: shard, Shards: shards,
		Engine: report.EngineMeta{Kind: sc.Engine.Kind, Dialect: ep.Dialect, BaseURL: ep.BaseURL, MetricsURL: ep.MetricsURL, Model: ep.Model, Notes: ep.Notes},
	}}
	if o := sc.SLO; o != nil {
		meta.SLO = &report.SLO{TTFT: o.TTFT, TPOT: o.TPOT, E2E: o.E2E}
		rec.SetSLO(*meta.SLO)
	}
	if err := meta.write(rec); err != nil {
		return dir, err
	}

	conc := expectedConcurrency(plan)
	cl, err := client.New(client.Config{
		BaseURL: ep.BaseURL, APIKey: apiKey, Model: ep.Model, Dialect: ep.Dialect,
		Start: start, MaxConns: conc, IncludeUsage: true, Timeout: sc.Workload.Timeout,
	})
	if err != nil {
		return dir, usageError(err)
	}
	defer cl.Close()
	// Connections are opened before the measured phase, so the first requests
	// do not pay connection set-up inside their TTFT.
	if err := cl.Warm(ctx, conc); err != nil {
		return dir, fmt.Errorf("open connections to %s: %w", ep.BaseURL, err)
	}

	rec.SetDialect(ep.Dialect)
	records := make(chan client.Record, 1024)
	rows := make(chan scrape.Row, 64)
	consumed := make(chan error, 1)
	go func() { consumed <- rec.Consume(records, rows) }()

	// Scrapes run until the driver is done, independent of Ctrl-C, so the
	// closing snapshot is still taken after an interrupted run drains.
	var scrapeWG sync.WaitGroup
	scrapeCtx, stopScrape := context.WithCancel(context.Background())
	defer stopScrape()
	source := metricsSource(sc.Scrape, ep)
	switch src := source.(type) {
	case nil:
	case scrape.Targets: // each target on its own ticker: a slow one delays no other
		loop := scrape.Loop{Targets: src, Interval: sc.Scrape.Interval, Start: start}
		scrapeWG.Go(func() { loop.Run(scrapeCtx, rows) })
	default:
		scrapeWG.Go(func() { scrape.RunSource(scrapeCtx, src, sc.Scrape.Interval, start, rows) })
	}

	phases := newPhaseBook(plan, source, start, rows, meta, rec)
	// The sender tells the driver each outcome, for abort conditions and
	// automatic sweeps.
	sender := workload.OutcomeSenderFunc(func(ctx context.Context, r workload.Request) workload.Outcome {
		rec.Begin()
		record := cl.Do(ctx, clientRequest(r))
		rec.End()
		phases.finished(&record)
		records <- record // the consumer drains until close: never lost, never stuck
		return workload.Outcome{OK: record.OK(), Canceled: record.ErrorClass == client.ErrCanceled,
			Unreachable: record.ErrorClass == client.ErrConnect}
	})
	driver := &workload.Driver{Plan: plan, Sender: sender, Start: start, OnPhase: phases.onPhase}

	runCtx, abort := context.WithCancel(ctx)
	defer abort()
	stop := make(chan struct{})
	tuiOn := useTUI(cio, opts)
	intr := newInterrupter(stop, abort, cio.stderr, !tuiOn)
	go intr.forward(runCtx, cio.signals)

	header := tui.Header{Scenario: sc.Name, RunDir: dir, Engine: fmt.Sprintf("%s (%s) %s", sc.Engine.Kind, orUnknown(ep.Dialect), ep.BaseURL),
		Planned: plannedDuration(plan), Phases: phaseNames(plan)}
	stopView := startProgressView(cio, opts, rec, header, intr.interrupt)
	restoreGC, quietGC := selfmon.QuietGC(cio.getenv)
	self0 := selfmon.Take()
	result, runErr := driver.Run(runCtx, stop)
	self := selfmon.Since(self0, selfmon.Take())
	restoreGC()
	stopView()

	stopScrape()
	scrapeWG.Wait()
	close(rows)
	close(records)
	consumeErr := <-consumed
	if err := rec.Close(); err != nil && consumeErr == nil {
		consumeErr = err
	}

	meta.update(func(m *report.RunMeta) {
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
			}
		}
		m.Client = report.ClientHealth{
			CPUCores: self.Cores, CPUUtilization: self.CPUUtilization,
			SchedLatencyP99_s: self.SchedLatencyP99.Seconds(), Saturated: self.Saturated(),
			GCCycles: self.GCCycles, GCPolicy: "GOGC/GOMEMLIMIT from the environment",
		}
		if quietGC {
			m.Client.GCPolicy = fmt.Sprintf("collect at a %d MiB heap (GOGC=off, GOMEMLIMIT)", selfmon.DefaultMemoryLimit>>20)
		}
		switch {
		case intr.happened():
			m.Stopped = "interrupted"
		case result.Stop != workload.StopCompleted && result.Stop != "":
			m.Stopped = string(result.Stop)
			if result.Reason != "" {
				m.Stopped += ": " + result.Reason
			}
		}
	})
	if err := meta.write(rec); err != nil {
		return dir, err
	}
	summary, err := report.Build(dir)
	if err != nil {
		return dir, fmt.Errorf("summarise %s: %w", dir, err)
	}
	if err := rec.WriteJSON(report.SummaryFile, summary); err != nil {
		return dir, err
	}
	raw, err := writeHTMLReport(dir, summary)
	if err != nil {
		return dir, err
	}
	if err := writeMarkdownReport(dir, summary); err != nil {
		return dir, err
	}
	if err := report.RenderText(cio.stdout, summary); err != nil {
		return dir, err
	}
	fmt.Fprintf(cio.stdout, "run directory: %s\n", dir)

	switch {
	case consumeErr != nil:
		return dir, fmt.Errorf("recording the run: %w", consumeErr)
	case runErr != nil && !intr.happened():
		return dir, fmt.Errorf("driving the load: %w", runErr)
	case intr.happened():
		return dir, fmt.Errorf("%w: the results measured so far are in %s", errInterrupted, dir)
	}
	// A run in which nothing succeeded measured nothing about the engine.
	if r := summary.Client.Requests; r.Sent > 0 && r.OK == 0 {
		return dir, fmt.Errorf("every request failed (%d); see the error samples above and %s", r.Failed, filepath.Join(dir, report.RequestsFile))
	}
	// Gates decide the exit code of a complete run (3 when one fails).
	if len(gs) > 0 {
		junit := opts.junit
		if junit == "" {
			junit = filepath.Join(dir, "junit.xml")
		}
		// The records were read once already, for the HTML report.
		return dir, reportGates(gs, gates.NewRun(summary, raw.Records), base, cio, junit)
	}
	return dir, nil
}

// metricsSource is where the run reads the engine's metrics: a Prometheus
// server, several replicas' /metrics, one URL, or the engine's own metrics
// URL; nil when there is none.
func metricsSource(cfg scenarios.Scrape, ep engine.Endpoint) scrape.Source {
	if p := cfg.Prometheus; p != nil {
		return promapi.Source{URL: p.URL, Selector: p.Selector, By: p.By, Dialect: ep.Dialect, Timeout: cfg.Timeout}
	}
	urls := cfg.Targets
	switch {
	case len(urls) > 0:
	case cfg.URL != "":
		urls = []string{cfg.URL}
	case ep.MetricsURL != "":
		urls = []string{ep.MetricsURL}
	default:
		return nil
	}
	ts := make(scrape.Targets, len(urls))
	for i, u := range urls {
		ts[i] = scrape.Target{URL: u, Dialect: ep.Dialect, Timeout: cfg.Timeout}
	}
	return ts
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

// writeMarkdownReport writes report.md into the run directory.
func writeMarkdownReport(dir string, s report.Summary) error {
	var buf bytes.Buffer
	if err := report.RenderMarkdown(&buf, s); err != nil {
		return err
	}
	return writeRunFile(dir, report.MarkdownFile, buf.Bytes())
}

// writeHTMLReport writes report.html into the run directory, and returns
// the raw files it read for it.
func writeHTMLReport(dir string, s report.Summary) (reporthtml.Input, error) {
	in, err := reporthtml.LoadRaw(dir, s)
	if err != nil {
		return in, fmt.Errorf("html report: %w", err)
	}
	if _, err := reporthtml.WriteFile(dir, in); err != nil {
		return in, fmt.Errorf("html report: %w", err)
	}
	return in, nil
}

// startEngine starts the engine; an interrupt while it starts (a real engine
// can take minutes to load its model) cancels the start.
func startEngine(ctx context.Context, eng engine.Engine, cio *cliIO) (engine.Endpoint, error) {
	startCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	started := make(chan struct{})
	var watching sync.WaitGroup
	watching.Go(func() {
		select {
		case <-started:
		case _, ok := <-cio.signals:
			if ok {
				fmt.Fprintln(cio.stderr, "llmbench: interrupted while the engine was starting")
				cancel()
			}
		}
	})
	ep, err := eng.Start(startCtx)
	close(started)
	watching.Wait() // the run's own signal handling takes over only after this
	if err != nil && startCtx.Err() != nil && ctx.Err() == nil {
		err = fmt.Errorf("%w: %w", errInterrupted, err)
	}
	return ep, err
}

// newEngine builds the engine the scenario names.
func newEngine(sc scenarios.Scenario, runDir, apiKey string) (engine.Engine, error) {
	switch sc.Engine.Kind {
	case scenarios.KindSim:
		if sc.Engine.Process != scenarios.ProcessInline {
			return simProcess(sc, runDir)
		}
		cfg := sim.Config{
			Dialect:   sc.Engine.Dialect,
			Model:     sc.Model,
			Params:    sc.Engine.Sim, // the preset with the scenario's overrides
			Faults:    sc.Engine.Faults,
			TruthPath: filepath.Join(runDir, report.TruthFile),
		}
		if cfg.Dialect == sim.DialectFastDeploy {
			cfg.TraceLogPath = filepath.Join(runDir, report.TraceLogFile)
		}
		return sim.New(cfg)
	case scenarios.KindLaunch:
		l := sc.Engine.Launch
		return launch.New(launch.Config{
			Kind: l.Kind, Command: l.Command, Model: l.Model, Host: l.Host, Port: l.Port, MetricsPort: l.MetricsPort,
			Env: l.Env, Extra: l.Extra, Ready: l.ReadyTimeout, ReadyPath: l.ReadyPath, Dir: l.Dir, NoMetrics: l.NoMetrics,
			Dialect: sc.Engine.Dialect, APIKey: apiKey, LogPath: filepath.Join(runDir, report.EngineLogFile),
		})
	case scenarios.KindExternal:
		return engine.External{Endpoint: engine.Endpoint{
			BaseURL: sc.Engine.BaseURL, MetricsURL: sc.Engine.MetricsURL, Dialect: sc.Engine.Dialect, Model: sc.Model,
		}, APIKey: apiKey}, nil
	default:
		return nil, fmt.Errorf("engine kind %q is not supported (sim, external)", sc.Engine.Kind)
	}
}

// runMeta guards the run's RunMeta, which the driver's phase hook and the run
// itself both update.
type runMeta struct {
	mu sync.Mutex
	report.RunMeta
}

func (m *runMeta) update(fn func(*report.RunMeta)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fn(&m.RunMeta)
}

func (m *runMeta) write(rec *report.Recorder) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return rec.WriteJSON(report.RunFile, m.RunMeta)
}

// clientRequest is the client's view of a planned request.
func clientRequest(r workload.Request) client.Request {
	msgs := make([]client.Message, len(r.Messages))
	for i, m := range r.Messages {
		msgs[i] = client.Message{Role: m.Role, Content: m.Content}
	}
	return client.Request{ID: r.ID, Index: r.Index, Phase: r.Phase, Intended: r.Intended, Messages: msgs,
		PromptTokens: r.PromptTokens, MaxTokens: r.MaxTokens, MinTokens: r.MinTokens, IgnoreEOS: r.IgnoreEOS}
}
