package scrape

import (
	"context"
	"sync"
	"time"
)

// DefaultInterval is the scrape interval of a Loop that sets none.
const DefaultInterval = time.Second

// Loop scrapes every target on a fixed interval.
type Loop struct {
	Targets  []Target
	Interval time.Duration // 0 = DefaultInterval
	Start    time.Time     // the run clock's origin; zero = when Run starts
}

// Run scrapes each target at once and then on every tick, each target in
// its own goroutine so a slow one delays no other, and sends one Row per
// scrape to out. A target's scrape timeout defaults to the interval. Ticks
// that come while a scrape is still running are dropped, not queued.
//
// Run returns when ctx is done and every goroutine has stopped; it sends
// nothing after it returns. It never closes out: the caller owns the
// channel, and may feed several producers into it, and closes it after Run
// returns. A scrape that failed because ctx ended is not sent: it says
// nothing about the target.
func (l Loop) Run(ctx context.Context, out chan<- Row) {
	interval := l.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	start := l.Start
	if start.IsZero() {
		start = time.Now()
	}
	var wg sync.WaitGroup
	for _, t := range l.Targets {
		if t.Timeout <= 0 {
			t.Timeout = interval
		}
		wg.Go(func() { RunSource(ctx, Targets{t}, interval, start, out) })
	}
	wg.Wait()
}

// ScrapeAll scrapes every target once, concurrently, and returns their rows
// in the order of targets: the closing snapshot of a window, or one poll of
// a fleet.
func ScrapeAll(ctx context.Context, targets []Target, start time.Time) []Row {
	rows := make([]Row, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() { rows[i] = t.Scrape(ctx, start) })
	}
	wg.Wait()
	return rows
}

// SumRows sums the snapshots of the rows that succeeded (see Sum); ok is
// false when none did.
func SumRows(rows []Row) (s Snapshot, ok bool) {
	var snaps []Snapshot
	for _, r := range rows {
		if r.OK && r.Snapshot != nil {
			snaps = append(snaps, *r.Snapshot)
		}
	}
	if len(snaps) == 0 {
		return Snapshot{}, false
	}
	return Sum(snaps...), true
}
