package scrape

import (
	"context"
	"errors"
	"time"
)

// Source yields one round of scrapes of an engine: one Row per target or
// replica. Direct targets (Targets) and a Prometheus server (package
// promapi) are both Sources, so a run takes its phase snapshots, settles and
// stores rows the same way whichever it reads.
type Source interface {
	ScrapeRows(ctx context.Context, start time.Time) []Row
}

// Targets scrapes each target directly, concurrently.
type Targets []Target

var _ Source = Targets(nil)

// ScrapeRows scrapes every target once; rows are in the order of the targets.
func (ts Targets) ScrapeRows(ctx context.Context, start time.Time) []Row {
	return ScrapeAll(ctx, ts, start)
}

// PollSource is a Poller that takes one round from src, hands each row to
// keep (so the run stores it like any other scrape; nil to drop), and sums
// them. A round fails when any row failed or there was none: the sum of a
// partial fleet cannot be compared with a baseline of the whole one.
func PollSource(src Source, start time.Time, keep func(Row)) Poller {
	return func(ctx context.Context) (Snapshot, error) {
		rows := src.ScrapeRows(ctx, start)
		var errs []error
		for _, r := range rows {
			if keep != nil {
				keep(r)
			}
			if !r.OK {
				errs = append(errs, errors.New(r.Error))
			}
		}
		if len(rows) == 0 {
			return Snapshot{}, errors.New("no scrape targets")
		}
		if len(errs) > 0 {
			return Snapshot{}, errors.Join(errs...)
		}
		s, _ := SumRows(rows)
		return s, nil
	}
}

// RunSource takes a round from src at once and then on every tick of
// interval, sending every row to out, until ctx is done. Like Loop.Run it
// never closes out, drops ticks that come while a round is running, and does
// not send rows of a round cut short by ctx.
func RunSource(ctx context.Context, src Source, interval time.Duration, start time.Time, out chan<- Row) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		rows := src.ScrapeRows(ctx, start)
		if ctx.Err() != nil {
			return
		}
		for _, row := range rows {
			select {
			case out <- row:
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return
		}
	}
}
