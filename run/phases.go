package run

import (
	"context"
	"sync"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/workload"
)

// settleTimeout bounds the wait for the engine's finished-request counter to
// catch up with the client after a phase's last request.
const settleTimeout = 5 * time.Second

// phaseBook takes the /metrics snapshots at phase boundaries and keeps the
// phases in the run's metadata.
type phaseBook struct {
	plan   *workload.Plan
	source scrape.Source // nil: the engine has no /metrics
	start  time.Time
	rows   chan<- scrape.Row
	meta   *runMeta
	// decisions judge each finished request for the phases that run until
	// decided and a search's probes (nil: none do).
	decisions *decisions

	// onStart, when set, hears of each phase as it starts (the live view
	// and llmbench's own metrics show the current phase).
	onStart func(phase string)

	// opening is the first phase's opening snapshot when it was taken ahead
	// of the phase's start event (openFirst), which then uses it.
	opening *opening
	// between resets the prefix cache and scrapes the GPUs at the
	// boundaries (between.go); nil does neither.
	between *betweenPhases

	mu sync.Mutex
	ok map[string]int // successful requests per phase in the engine's units (Record.EngineRequests), to settle the closing snapshot on
}

// opening is a phase's opening snapshot taken ahead of its start.
type opening struct {
	before     *scrape.Row
	beforeRows []scrape.Row
	cache      *rundir.PhaseCache // the first phase's cache, prepared before the snapshot
}

// The phases' snapshots wait scrape.SnapshotTimeout at least, not the
// periodic scrapes' timeout: one lost to a busy host loses the phase's
// server view.
func newPhaseBook(plan *workload.Plan, source scrape.Source, start time.Time, rows chan<- scrape.Row, meta *runMeta) *phaseBook {
	source = scrape.Patient(source, scrape.SnapshotTimeout)
	return &phaseBook{plan: plan, source: source, start: start, rows: rows, meta: meta, ok: map[string]int{}}
}

// finished counts a finished request for its phase; called from the request path.
func (b *phaseBook) finished(r *client.Record) {
	b.decisions.add(r)
	if !r.OK() {
		return
	}
	b.mu.Lock()
	b.ok[r.Phase] += r.EngineRequests()
	b.mu.Unlock()
}

// openFirst takes the first phase's opening snapshot now, before the
// driver starts: a run given a start time (--start-at) takes it while it
// waits (waitForStart), so that the phase's arrivals begin at that time
// rather than a scrape's duration after it. Taken again, the later snapshot
// replaces the earlier, which stays in the scrapes as one outside every
// phase. Nothing is sent between it and the first request (the connections
// were opened before), so the phase's counter deltas still cover its
// requests and only them.
//
// A snapshot that ctx cut short (the start time came first: waitForStart's
// retake) is dropped when an earlier one stands: its rows say nothing about
// the target, and the earlier one covers the phase's requests as well.
func (b *phaseBook) openFirst(ctx context.Context) {
	var cache *rundir.PhaseCache
	if b.opening != nil {
		cache = b.opening.cache // a retake: the cache was prepared already
	} else if phases := b.plan.Phases(); len(phases) > 0 {
		cache = b.between.prepareCache(ctx, phases[0].Name, phases[0].Measured)
	}
	if b.source == nil {
		b.opening = &opening{cache: cache}
		return
	}
	rows := b.source.ScrapeRows(ctx, b.start)
	if ctx.Err() != nil && b.opening != nil {
		return
	}
	for _, r := range rows {
		b.rows <- r
	}
	b.opening = &opening{before: combine(rows), beforeRows: rows, cache: cache}
}

// onPhase is the Driver's hook, called synchronously at phase boundaries: the
// opening snapshot is taken before the phase's first request is sent, the
// closing one after its last request finished and the engine settled.
func (b *phaseBook) onPhase(ctx context.Context, ev workload.PhaseEvent) {
	// Snapshots are taken even when the run is being aborted: they cost one
	// scrape per target and make the partial run's server view complete.
	ctx = context.WithoutCancel(ctx)
	if ev.Kind == workload.PhaseStart {
		if b.onStart != nil {
			b.onStart(ev.Phase)
		}
		var before *scrape.Row
		var beforeRows []scrape.Row
		var cache *rundir.PhaseCache
		if b.opening != nil { // only ever the first phase's: taken before the driver started
			before, beforeRows, cache = b.opening.before, b.opening.beforeRows, b.opening.cache
			b.opening = nil
		} else {
			cache = b.between.prepareCache(ctx, ev.Phase, ev.Measured)
			before, beforeRows = b.snapshot(ctx)
		}
		pm := rundir.PhaseMeta{Name: ev.Phase, Measured: ev.Measured, Start: ev.At, Before: before, BeforeRows: apart(beforeRows),
			Cache: cache, GPUBefore: b.between.gpuRound(ctx)}
		if phases := b.plan.Phases(); ev.Index >= 0 && ev.Index < len(phases) {
			ph := phases[ev.Index]
			switch {
			case ph.Open() && ph.Rate > 0:
				pm.Load, pm.LoadUnit = ph.Rate, "requests/s"
			case !ph.Open() && ph.Concurrency > 0:
				pm.Load, pm.LoadUnit = float64(ph.Concurrency), "users"
			}
		} else { // a phase chosen at run time (a search's probe): its load as it runs
			pm.Load, pm.LoadUnit = eventLoad(ev)
		}
		b.meta.update(func(m *rundir.RunMeta) { m.Phases = append(m.Phases, pm) })
		b.meta.write()
		return
	}
	var before *scrape.Row
	b.meta.update(func(m *rundir.RunMeta) {
		if i := phaseIndex(m, ev.Phase); i >= 0 {
			before = m.Phases[i].Before
		}
	})
	b.mu.Lock()
	want := b.ok[ev.Phase]
	b.mu.Unlock()
	after, afterRows, settled := b.settle(ctx, before, want)
	gpuAfter := b.between.gpuRound(ctx)
	b.meta.update(func(m *rundir.RunMeta) {
		if i := phaseIndex(m, ev.Phase); i >= 0 {
			m.Phases[i].End = ev.At
			m.Phases[i].After = after
			m.Phases[i].AfterRows = apart(afterRows)
			m.Phases[i].Settle = settled
			m.Phases[i].GPUAfter = gpuAfter
		}
	})
	b.meta.write()
}

func phaseIndex(m *rundir.RunMeta, name string) int {
	for i := len(m.Phases) - 1; i >= 0; i-- {
		if m.Phases[i].Name == name {
			return i
		}
	}
	return -1
}

// snapshot takes one round of the source, stores its rows like any other
// scrape, and returns them combined into one row (the fleet's sum) with the
// rows themselves; nil without a source.
func (b *phaseBook) snapshot(ctx context.Context) (*scrape.Row, []scrape.Row) {
	if b.source == nil {
		return nil, nil
	}
	rows := b.source.ScrapeRows(ctx, b.start)
	for _, r := range rows {
		b.rows <- r
	}
	return combine(rows), rows
}

// apart keeps the rows of a round when there are several (replicas), so the
// report can show each one's share; one row is already the combined row.
func apart(rows []scrape.Row) []scrape.Row {
	if len(rows) < 2 {
		return nil
	}
	return rows
}

// combine turns one scrape of every target into one row: the sum of the
// snapshots, failed when any target failed (a partial fleet cannot be compared
// with a baseline of the whole one).
func combine(rows []scrape.Row) *scrape.Row {
	switch len(rows) {
	case 0:
		return nil
	case 1:
		return &rows[0]
	}
	out := rows[0]
	out.Target = "all targets"
	out.OK, out.Snapshot, out.Error = true, nil, ""
	for _, r := range rows {
		if !r.OK {
			out.OK, out.Error = false, r.Target+": "+r.Error
			break
		}
	}
	if out.OK {
		snap, _ := scrape.SumRows(rows)
		out.Snapshot = &snap
	}
	return &out
}

// settle waits until the engine's finished-request counter has grown by the
// client's successful count since before (engines count a request a little
// before or after its last byte), then returns the closing snapshot, the
// round's rows, and how settling ended.
func (b *phaseBook) settle(ctx context.Context, before *scrape.Row, want int) (*scrape.Row, []scrape.Row, *scrape.Settled) {
	if before == nil || !before.OK || before.Snapshot == nil {
		after, rows := b.closingSnapshot(ctx)
		return after, rows, nil
	}
	var last []scrape.Row
	poll := scrape.PollSource(b.source, b.start, func(r scrape.Row) {
		b.rows <- r
		last = append(last, r)
	})
	settled := scrape.Settler{
		Poll: func(ctx context.Context) (scrape.Snapshot, error) {
			last = last[:0]
			return poll(ctx)
		},
		Timeout: settleTimeout,
	}.Wait(ctx, *before.Snapshot, float64(want))
	if len(last) == 0 {
		after, rows := b.closingSnapshot(ctx)
		return after, rows, &settled
	}
	rows := append([]scrape.Row(nil), last...)
	return combine(rows), rows, &settled
}

// closingSnapshot is a phase's closing snapshot taken with nothing to
// settle against: a round that fails (the engine restarting, its port
// refusing) is taken again every scrape.DefaultSettleEvery until one
// succeeds or settleTimeout has passed, so a restart at the phase's end
// does not cost the phase its server view.
func (b *phaseBook) closingSnapshot(ctx context.Context) (*scrape.Row, []scrape.Row) {
	deadline := time.Now().Add(settleTimeout)
	for {
		after, rows := b.snapshot(ctx)
		if after == nil || after.OK || ctx.Err() != nil || !time.Now().Add(scrape.DefaultSettleEvery).Before(deadline) {
			return after, rows
		}
		t := time.NewTimer(scrape.DefaultSettleEvery)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return after, rows
		}
	}
}
