package reconcile

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/llmbench-org/llmbench/scrape"
)

// deadAfter is how many failed scrapes in a row, up to the last one, make a
// target dead rather than flaky: one failure can be a timeout under load;
// two consecutive ones at the end mean it stopped answering.
const deadAfter = 2

// scrapeHealth reports each target's scrapes, one finding per target in URL
// order: dead (fail), failing (warn), answering without known metrics
// (warn), or healthy (info). Any failed scrape is at least a warning: with a
// healthy engine none should fail, and each one is a hole in the server's view.
func (a *analysis) scrapeHealth() []Finding {
	byTarget := map[string][]scrape.Row{}
	for _, r := range a.in.Rows {
		byTarget[r.Target] = append(byTarget[r.Target], r)
	}
	targets := make([]string, 0, len(byTarget))
	for t := range byTarget {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	var out []Finding
	for _, t := range targets {
		out = append(out, targetHealth(t, byTarget[t])...)
	}
	return out
}

func targetHealth(target string, rows []scrape.Row) []Finding {
	slices.SortStableFunc(rows, func(a, b scrape.Row) int { return compareDur(a.At, b.At) })
	var ok, failed, unrecognised, trailing int
	var lastErr string
	var lastErrAt, lastOKAt, trailingFrom time.Duration
	var durs []time.Duration
	for _, r := range rows {
		if r.OK {
			ok++
			trailing = 0
			lastOKAt = r.At
			durs = append(durs, r.Duration)
			if r.Snapshot == nil || r.Snapshot.Dialect == "" {
				unrecognised++
			}
			continue
		}
		failed++
		if trailing == 0 {
			trailingFrom = r.At
		}
		trailing++
		lastErr, lastErrAt = r.Error, r.At
	}
	ev := evidence{}
	ev.set("scrapes", float64(len(rows)))
	ev.set("failed", float64(failed))
	if len(durs) > 0 {
		slices.Sort(durs)
		ev.set("median_duration_s", durs[len(durs)/2].Seconds())
	}
	var out []Finding
	switch {
	case ok == 0:
		out = append(out, Finding{ID: IDScrapeDead, Severity: Fail, Evidence: ev.orNil(),
			Verdict: fmt.Sprintf("%s: none of %d scrapes succeeded (last: %s): there is no server view", target, len(rows), short(lastErr))})
	case trailing >= deadAfter:
		ev.set("last_ok_at_s", lastOKAt.Seconds())
		ev.set("dead_from_s", trailingFrom.Seconds())
		out = append(out, Finding{ID: IDScrapeDead, Severity: Fail, Evidence: ev.orNil(),
			Verdict: fmt.Sprintf("%s stopped answering at %s into the run: the last %d scrapes failed (%s), so phases that end after that have no closing snapshot",
				target, dur(trailingFrom.Seconds()), trailing, short(lastErr))})
	case failed > 0:
		ev.set("last_failure_at_s", lastErrAt.Seconds())
		out = append(out, Finding{ID: IDScrapeFailures, Severity: Warn, Evidence: ev.orNil(),
			Verdict: fmt.Sprintf("%s: %d of %d scrapes failed, the last at %s (%s): the server's view has holes there",
				target, failed, len(rows), dur(lastErrAt.Seconds()), short(lastErr))})
	}
	if unrecognised > 0 {
		out = append(out, Finding{ID: IDScrapeUnrecognised, Severity: Warn,
			Evidence: map[string]float64{"scrapes": float64(unrecognised)},
			Verdict:  fmt.Sprintf("%s answers, but %d scrapes held no metric of a known engine: check the URL or set the scenario's dialect", target, unrecognised)})
	}
	if len(out) == 0 {
		out = append(out, Finding{ID: IDScrapeHealth, Severity: Info, Evidence: ev.orNil(),
			Verdict: fmt.Sprintf("%s: all %d scrapes answered", target, len(rows))})
	}
	return out
}

func compareDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// short cuts an error message for a one-line verdict.
func short(s string) string {
	const maxLen = 160
	if len(s) <= maxLen {
		return s
	}
	r := []rune(s)
	if len(r) <= maxLen {
		return s
	}
	return string(r[:maxLen]) + "…"
}
