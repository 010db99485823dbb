package promapi

import (
	"context"
	"sort"
	"time"

	"github.com/llmbench-org/llmbench/scrape"
)

var _ scrape.Source = Source{}

// ScrapeRows evaluates the fleet now and returns one row per replica, each
// named "<server>#<by>=<replica>", so a run stores the replicas apart and sums
// them for its server view like directly scraped targets. A failed query is a
// single failed row for the server; a fleet with no series is a failed row
// too (nothing to compare with).
func (s Source) ScrapeRows(ctx context.Context, start time.Time) []scrape.Row {
	wall := time.Now().Round(0) // wall clock: lines rows up with the engine's and Prometheus's own times
	began := time.Now()
	sample, err := s.Instant(ctx, time.Time{})
	fail := func(msg string) []scrape.Row {
		return []scrape.Row{{Target: s.URL, Wall: wall, At: began.Sub(start), Duration: time.Since(began), Error: msg}}
	}
	if err != nil {
		return fail(err.Error())
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
	dur := time.Since(began)
	for _, name := range names {
		snap := sample.Replicas[name]
		rows = append(rows, scrape.Row{
			Target: s.URL + "#" + by + "=" + name, Wall: wall, At: began.Sub(start), Duration: dur,
			OK: true, Snapshot: &snap,
		})
	}
	return rows
}
