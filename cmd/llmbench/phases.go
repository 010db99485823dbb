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
const settleTimeout = 3 * time.Second

// phaseBook takes the /metrics snapshots at phase boundaries and keeps the
// phases in the run's metadata.
type phaseBook struct {
	target *scrape.Target // nil: the engine has no /metrics
	start  time.Time
	rows   chan<- scrape.Row
	meta   *runMeta
	rec    *report.Recorder

	mu sync.Mutex
	ok map[string]int // successful requests per phase, to settle the closing snapshot on
}

func newPhaseBook(target *scrape.Target, start time.Time, rows chan<- scrape.Row, meta *runMeta, rec *report.Recorder) *phaseBook {
	return &phaseBook{target: target, start: start, rows: rows, meta: meta, rec: rec, ok: map[string]int{}}
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
	// scrape and make the partial run's server view complete.
	ctx = context.WithoutCancel(ctx)
	now := ev.At
	if ev.Kind == workload.PhaseStart {
		b.rec.SetPhase(ev.Phase)
		row := b.snapshot(ctx)
		b.meta.update(func(m *report.RunMeta) {
			m.Phases = append(m.Phases, report.PhaseMeta{Name: ev.Phase, Measured: ev.Measured, Start: now, Before: row})
		})
		b.meta.write(b.rec)
		return
	}
	var before *scrape.Row
	b.meta.update(func(m *report.RunMeta) {
		if i := b.phaseIndex(m, ev.Phase); i >= 0 {
			before = m.Phases[i].Before
		}
	})
	b.mu.Lock()
	want := b.ok[ev.Phase]
	b.mu.Unlock()
	after := b.settle(ctx, before, want)
	b.meta.update(func(m *report.RunMeta) {
		if i := b.phaseIndex(m, ev.Phase); i >= 0 {
			m.Phases[i].End = now
			m.Phases[i].After = after
		}
	})
	b.meta.write(b.rec)
}

func (b *phaseBook) phaseIndex(m *report.RunMeta, name string) int {
	for i := len(m.Phases) - 1; i >= 0; i-- {
		if m.Phases[i].Name == name {
			return i
		}
	}
	return -1
}

// snapshot scrapes once and stores the row like any other scrape.
func (b *phaseBook) snapshot(ctx context.Context) *scrape.Row {
	if b.target == nil {
		return nil
	}
	row := b.target.Scrape(ctx, b.start)
	b.rows <- row
	return &row
}

// settle scrapes until the engine's finished-request counter has grown by the
// client's successful count since before (engines count a request a little
// after its last byte), or settleTimeout passes; it returns the last scrape.
func (b *phaseBook) settle(ctx context.Context, before *scrape.Row, want int) *scrape.Row {
	deadline := time.Now().Add(settleTimeout)
	for {
		row := b.snapshot(ctx)
		if row == nil || before == nil || !before.OK || before.Snapshot == nil || !row.OK || row.Snapshot == nil {
			return row
		}
		got, has := scrape.Delta(*before.Snapshot, *row.Snapshot).Counters[scrape.RequestsFinished]
		if !has || got >= float64(want) || time.Now().After(deadline) {
			return row
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return row
		case <-t.C:
		}
	}
}
