package run

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine"
	"github.com/llmbench-org/llmbench/engines"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/selfmon"
	"github.com/llmbench-org/llmbench/workload"
)

// driving is what the drive stage needs from the stages before it.
type driving struct {
	plan        *workload.Plan
	start       time.Time // the run clock's origin
	client      *client.Client
	minTokens   bool          // the engine takes min_tokens (takesMinTokens)
	source      scrape.Source // the engine's metrics; nil: none
	scrapeEvery time.Duration
	meta        *runMeta
	rec         *recording // the run directory and the live view
	outs        *outputs   // every sink, rec among them
	live        Live
	decisions   *decisions     // the search stage (nil: nothing to decide)
	stall       time.Duration  // workload.stall_timeout (0: none)
	between     *betweenPhases // cache resets and GPU telemetry at phase boundaries
	images      *imageBank     // the plan's images, encoded ahead (nil: none)
}

// driven is what the drive stage left.
type driven struct {
	result       workload.Result
	runErr       error          // the driver's
	recordErr    error          // the sinks': the first that failed, and every Close error
	self         selfmon.Report // the client's look at itself over the load
	quietGC      bool           // the quiet collector ran the load (0004)
	imagesAtSend int            // images encoded as their request went out (past the bank)
}

// drive is the drive stage: it starts the outputs' consumer and the scrapers,
// waits for the start time (--start-at) with the first phase's opening
// snapshot, drives the plan's phases under the quiet collector, and ends with
// the measurement's one teardown. Only a start that came too late is an
// error: what was recorded until then is written out, and nothing is sent.
func drive(ctx context.Context, cfg Config, sys IO, s driving) (driven, error) {
	if err := s.between.startGPU(s.rec.Dir(), s.start); err != nil {
		return driven{}, err
	}
	s.rec.startLive(s.meta.snapshot())
	m := startMeasuring(s.outs, s.source, s.scrapeEvery, s.start)
	phases := newPhaseBook(s.plan, s.source, s.start, s.outs.rows, s.meta)
	phases.onStart = s.outs.phaseStarted
	phases.between = s.between
	driver := &workload.Driver{Plan: s.plan, Start: s.start, OnPhase: phases.onPhase,
		Sender: newSender(s.client, s.minTokens, s.images, s.outs, phases, s.outs.records)}
	phases.decisions = s.decisions
	s.decisions.attach(driver)

	// The collector is set up (a full collection first) before the wait: after
	// it, the collection would hold back the first arrivals by milliseconds.
	restoreGC, quietGC := selfmon.QuietGC(sys.Getenv)
	var d driven
	err := waitForStart(ctx, cfg.StartAt, cfg.Stop, sys.Stderr, phases.openFirst)
	if err == nil {
		d = runLoad(ctx, cfg, sys, driver, s)
	}
	s.decisions.finish() // a probe the run cut short: its verdict on what it finished
	restoreGC()
	d.quietGC = quietGC
	d.imagesAtSend = s.images.encodedAtSend()
	d.recordErr = errors.Join(m.stop(), s.between.stop())
	return d, err
}

// runLoad runs the driver with the views watching and the client looking at
// itself; the first sink error (a full disk) aborts it.
func runLoad(ctx context.Context, cfg Config, sys IO, driver *workload.Driver, s driving) driven {
	stopViews := startViews(cfg.Views, s.live)
	defer stopViews()
	self0 := selfmon.Take()
	// An output that fails (a run directory that can no longer be written)
	// stops the run: what it would measure from then on could not be kept.
	driveCtx, abortDrive := context.WithCancel(ctx)
	go func() {
		select {
		case <-s.outs.failure():
			fmt.Fprintf(sys.Stderr, "llmbench: %v: stopping the run\n", s.outs.firstErr())
			abortDrive()
		case <-driveCtx.Done():
		}
	}()
	var watching sync.WaitGroup
	watching.Go(func() { watchClient(driveCtx, s.rec.view) })
	watching.Go(func() { s.client.WatchStalls(driveCtx, s.stall) })
	watching.Go(func() { watchSilent(driveCtx, s.client, s.rec.view) })
	var d driven
	d.result, d.runErr = driver.Run(driveCtx, cfg.Stop)
	abortDrive()
	watching.Wait()
	d.self = selfmon.Since(self0, selfmon.Take())
	return d
}

// measuring is the plumbing of the load: the outputs' consumer and the
// scrapers that feed it.
type measuring struct {
	outs       *outputs
	stopScrape context.CancelFunc
	scraping   sync.WaitGroup
}

// startMeasuring starts the outputs' consumer and the scrapes of source (none
// when nil), every interval.
func startMeasuring(outs *outputs, source scrape.Source, interval time.Duration, start time.Time) *measuring {
	outs.start()
	// Scrapes run until the driver is done, independent of an interrupt, so
	// the closing snapshot is still taken after an interrupted run drains.
	scrapeCtx, stopScrape := context.WithCancel(context.Background())
	m := &measuring{outs: outs, stopScrape: stopScrape}
	switch src := source.(type) {
	case nil:
	case scrape.Targets: // each target on its own ticker: a slow one delays no other
		loop := scrape.Loop{Targets: src, Interval: interval, Start: start}
		m.scraping.Go(func() { loop.Run(scrapeCtx, outs.rows) })
	default:
		m.scraping.Go(func() { scrape.RunSource(scrapeCtx, src, interval, start, outs.rows) })
	}
	return m
}

// stop is the measurement's teardown, the one way it ends: the scrapers
// stop, then the consumer drains what the sender and the scrapers sent and
// every sink is closed. It returns the sinks' errors. The driver must have
// returned (nothing sends any more).
func (m *measuring) stop() error {
	m.stopScrape()
	m.scraping.Wait()
	return m.outs.close()
}

// newSender is the driver's sender: each request through the client, the
// observers told as it goes out and comes back, its record to the sinks.
// It tells the driver each outcome, for abort conditions and automatic
// sweeps.
func newSender(cl *client.Client, minTokens bool, images *imageBank, obs RequestObserver, phases *phaseBook, records chan<- client.Record) workload.OutcomeSenderFunc {
	return workload.OutcomeSenderFunc(func(ctx context.Context, r workload.Request) workload.Outcome {
		obs.Begin()
		record, reply := send(ctx, cl, r, minTokens, images)
		obs.End()
		phases.finished(&record)
		records <- record // the consumer drains until close: never lost, never stuck
		return workload.Outcome{OK: record.OK(), Canceled: record.ErrorClass == client.ErrCanceled,
			Unreachable: record.ErrorClass == client.ErrConnect,
			Unavailable: record.ErrorClass == client.ErrHTTPStatus && record.Status == http.StatusServiceUnavailable,
			Reply:       reply}
	})
}

// takesMinTokens says whether the engine family takes min_tokens beside
// ignore_eos (engines.Lengths.MinTokens): asking for both makes the length
// exact there. Others, and an engine of no known family, are sent ignore_eos
// alone (an unknown field may be refused). It reads the registry when the
// run starts, so a family registered after start-up counts too.
func takesMinTokens(dialect string) bool {
	f, err := engines.Lookup(dialect)
	return err == nil && f.Lengths.MinTokens
}

// clientRequest is the client's view of a planned request, its images' data
// URLs from images; with minTokens, a request that must run to max_tokens
// asks for it as its minimum too.
func clientRequest(r workload.Request, minTokens bool, images *imageBank) client.Request {
	if minTokens && r.IgnoreEOS && r.MinTokens == 0 {
		r.MinTokens = r.MaxTokens
	}
	return client.Request{ID: r.ID, Index: r.Index, Phase: r.Phase, Intended: r.Intended, Messages: clientMessages(r.Messages, images),
		PromptTokens: r.PromptTokens, MaxTokens: r.MaxTokens, MinTokens: r.MinTokens, IgnoreEOS: r.IgnoreEOS,
		Session: r.Session}
}

// newLive is what the views are shown of the run.
func newLive(sc scenarios.Scenario, ep engine.Endpoint, plan *workload.Plan, dir string, rec *recording) Live {
	return Live{Scenario: sc.Name, RunDir: dir, Engine: fmt.Sprintf("%s (%s) %s", sc.Engine.Kind, orUnknown(ep.Dialect), ep.BaseURL),
		Planned: plannedDuration(plan), PlannedRequests: plannedRequests(plan), Phases: PhaseNames(plan), Progress: rec.Progress}
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

// plannedDuration is the plan's total duration when every phase has one (0 = unknown).
func plannedDuration(plan *workload.Plan) time.Duration {
	var d time.Duration
	if plan.Search() != nil { // its probes are chosen as it goes
		return 0
	}
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
	if plan.Search() != nil {
		return 0
	}
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
