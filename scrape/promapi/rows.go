package promapi

import (
	"context"
	"sort"
	"time"

	"github.com/llmbench-org/llmbench/scrape"
)

var (
	_ scrape.Source    = Source{}
	_ scrape.Patienter = Source{}
)

// Patient returns the source with each query's timeout at least timeout (a
// window's snapshots: scrape.SnapshotTimeout); one with none already waits
// scrape.DefaultTimeout.
func (s Source) Patient(timeout time.Duration) scrape.Source {
	if s.Timeout > 0 && s.Timeout < timeout {
		s.Timeout = timeout
	}
	return s
}

// ScrapeRows evaluates the fleet once Prometheus has scraped every replica
// since the round began (InstantAfter, within FreshWait; a negative
// FreshWait reads what it holds at once) and returns one row per replica,
// each named "<server>#<by>=<replica>", so a run stores the replicas apart
// and sums them for its server view like directly scraped targets. A round
// so reads the engine as it was after it was asked for, like a direct
// scrape: a phase's closing snapshot holds the phase's last requests. The
// rows are stamped with the oldest replica's scrape time (At) and last
// until the answer (Duration). A failed query, or no scrape of a replica
// within FreshWait, is a single failed row for the server; a fleet with no
// series is a failed row too (nothing to compare with).
func (s Source) ScrapeRows(ctx context.Context, start time.Time) []scrape.Row {
	wall := time.Now().Round(0) // wall clock: lines rows up with the engine's and Prometheus's own times
	began := time.Now()
	var sample Sample
	var err error
	switch wait := s.FreshWait; {
	case wait < 0:
		sample, err = s.Instant(ctx, time.Time{})
	default:
		if wait == 0 {
			wait = DefaultFreshWait
		}
		sample, err = s.InstantAfter(ctx, began, wait)
	}
	fail := func(msg string) []scrape.Row {
		return []scrape.Row{{Target: s.URL, Wall: wall, At: began.Sub(start), Duration: time.Since(began), Error: msg}}
	}
	if err != nil {
		return fail(err.Error())
	}
	answered := time.Now()
	if sc := sample.Scraped; !sc.IsZero() {
		// On llmbench's clocks: the scrape's wall time, and its offset
		// from began (never before it: the wait guarantees after, up to
		// the clocks' agreement).
		at := min(max(sc.Sub(wall), 0), answered.Sub(began))
		wall, began = wall.Add(at), began.Add(at)
	}
	if len(sample.Replicas) == 0 {
		q, _ := s.Query()
		return fail("prometheus " + s.URL + ": no series match " + q)
	}
	by := s.By
	if by == "" {
		by = "instance"
	}
	names := make([]string, 0, len(sample.Replicas))
	for name := range sample.Replicas {
		names = append(names, name)
	}
	sort.Strings(names)
	rows := make([]scrape.Row, 0, len(names))
	dur := answered.Sub(began)
	for _, name := range names {
		snap := sample.Replicas[name]
		rows = append(rows, scrape.Row{
			Target: s.URL + "#" + by + "=" + name, Wall: wall, At: began.Sub(start), Duration: dur,
			OK: true, Snapshot: &snap,
		})
	}
	return rows
}
