package main

import (
	"context"
	"sync"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/workload"
)

// settleTimeout bounds the wait for the engine's finished-request counter to
// catch up with the client after a phase's last request.
const settleTimeout = 5 * time.Second

// phaseBook takes the /metrics snapshots at phase boundaries and keeps the
// phases in the run's metadata.
type phaseBook struct {
	plan    *workload.Plan
	targets []scrape.Target // none: the engine has no /metrics
	start   time.Time
	rows    chan<- scrape.Row
	meta    *runMeta
	rec     *report.Recorder

	mu sync.Mutex
	ok map[string]int // successful requests per phase, to settle the closing snapshot on
}

func newPhaseBook(plan *workload.Plan, targets []scrape.Target, start time.Time, rows chan<- scrape.Row, meta *runMeta, rec *report.Recorder) *phaseBook {
	return &phaseBook{plan: plan, targets: targets, start: start, rows: rows, meta: meta, rec: rec, ok: map[string]int{}}
}

// finished counts a finished request for its phase; called from the request path.
func (b *phaseBook) finished(r *client.Record) {
	if !r.OK() {
		return
	}
	b.mu.Lock()
	b.ok[r.Phase]++
	b.mu.Unlock()
}

// onPhase is the Driver's hook, called synchronously at phase boundaries: the
// opening snapshot is taken before the phase's first request is sent, the
// closing one after its last request finished and the engine settled.
func (b *phaseBook) onPhase(ctx context.Context, ev workload.PhaseEvent) {
	// Snapshots are taken even when the run is being aborted: they cost one
	// scrape per target and make the partial run's server view complete.
	ctx = context.WithoutCancel(ctx)
	if ev.Kind == workload.PhaseStart {
		b.rec.SetPhase(ev.Phase)
		before := b.snapshot(ctx)
		pm := report.PhaseMeta{Name: ev.Phase, Measured: ev.Measured, Start: ev.At, Before: before}
		if phases := b.plan.Phases(); ev.Index >= 0 && ev.Index < len(phases) {
			ph := phases[ev.Index]
			switch {
			case ph.Open() && ph.Rate > 0:
				pm.Load, pm.LoadUnit = ph.Rate, "requests/s"
			case !ph.Open() && ph.Concurrency > 0:
				pm.Load, pm.LoadUnit = float64(ph.Concurrency), "users"
			}
		}
		b.meta.update(func(m *report.RunMeta) { m.Phases = append(m.Phases, pm) })
		b.meta.write(b.rec)
		return
	}
	var before *scrape.Row
	b.meta.update(func(m *report.RunMeta) {
		if i := phaseIndex(m, ev.Phase); i >= 0 {
			before = m.Phases[i].Before
		}
	})
	b.mu.Lock()
	want := b.ok[ev.Phase]
	b.mu.Unlock()
	after, settled := b.settle(ctx, before, want)
	b.meta.update(func(m *report.RunMeta) {
		if i := phaseIndex(m, ev.Phase); i >= 0 {
			m.Phases[i].End = ev.At
			m.Phases[i].After = after
			m.Phases[i].Settle = settled
		}
	})
	b.meta.write(b.rec)
}

func phaseIndex(m *report.RunMeta, name string) int {
	for i := len(m.Phases) - 1; i >= 0; i-- {
		if m.Phases[i].Name == name {
			return i
		}
	}
	return -1
}

// snapshot scrapes every target once, stores the rows like any other scrape,
// and returns them combined into one row (the fleet's sum); nil without targets.
func (b *phaseBook) snapshot(ctx context.Context) *scrape.Row {
	if len(b.targets) == 0 {
		return nil
	}
	rows := scrape.ScrapeAll(ctx, b.targets, b.start)
	for _, r := range rows {
		b.rows <- r
	}
	return combine(rows)
}

// combine turns one scrape of every target into one row: the sum of the
// snapshots, failed when any target failed (a partial fleet cannot be compared
// with a baseline of the whole one).
func combine(rows []scrape.Row) *scrape.Row {
	if len(rows) == 1 {
		return &rows[0]
	}
	out := rows[0]
	out.Target = "all targets"
	snap, ok := scrape.SumRows(rows)
	out.OK = ok
	if ok {
		out.Snapshot = &snap
		out.Error = ""
	} else {
		out.Snapshot = nil
		for _, r := range rows {
			if !r.OK {
				out.Error = r.Target + ": " + r.Error
				break
			}
		}
	}
	return &out
}

// settle waits until the engine's finished-request counter has grown by the
// client's successful count since before (engines count a request a little
// before or after its last byte), then returns the closing snapshot.
func (b *phaseBook) settle(ctx context.Context, before *scrape.Row, want int) (*scrape.Row, *scrape.Settled) {
	if before == nil || !before.OK || before.Snapshot == nil {
		return b.snapshot(ctx), nil
	}
	var last []scrape.Row
	poll := scrape.PollTargets(b.targets, b.start, func(r scrape.Row) {
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
		return b.snapshot(ctx), &settled
	}
	return combine(append([]scrape.Row(nil), last...)), &settled
}
