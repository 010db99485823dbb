package reconcile

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

// runLikeInput is the world's run scraped as llmbench scrapes a real one:
// a first scrape of the idle engine (the dialect probe), the phase's
// opening snapshot taken when the phase starts, the instant before its
// first request, periodic scrapes every scrapeEvery, and the closing
// snapshot just after the last request. The two opening scrapes read an
// idle engine a few milliseconds apart; the load then fills the window.
func runLikeInput(w *world) Input {
	w.build()
	first, last := w.records[0].Sent, time.Duration(0)
	for _, r := range w.records {
		first, last = min(first, r.Sent), max(last, r.End)
	}
	probe, before, after := w.row(first-8*time.Millisecond), w.row(first-time.Millisecond), w.row(last+5*time.Millisecond)
	rows := []scrape.Row{probe, before}
	for t := w.scrapeEvery; t < last; t += w.scrapeEvery {
		rows = append(rows, w.row(t))
	}
	rows = append(rows, after)
	return Input{
		Records: slices.Clone(w.records),
		// The phase starts, then its opening snapshot is taken: Start is
		// at or before Before.At, as in a run (run.json's phases).
		Windows: []Window{{Name: "main", Measured: true, Start: before.At, End: last, Before: &before, After: &after}},
		Rows:    rows,
		Dialect: w.dialect,
		Origin:  w.origin,
	}
}

// liveAt replays a runLikeInput into a live reconciler up to now, as the
// recorder feeds it.
func liveAt(in Input, now time.Duration) []Finding {
	l := NewLive(10*time.Second, in.Dialect)
	recs := slices.Clone(in.Records)
	slices.SortFunc(recs, func(a, b client.Record) int { return compareDur(a.End, b.End) })
	i := 0
	for _, row := range in.Rows {
		if row.At > now {
			break
		}
		for i < len(recs) && recs[i].End <= row.At {
			l.AddRecord(recs[i])
			i++
		}
		l.AddRow(row)
	}
	for i < len(recs) && recs[i].End <= now {
		l.AddRecord(recs[i])
		i++
	}
	return l.Findings(now, 0)
}

// TestConcurrencyAtScrapeEdges: a run scraped once a second, whose engine
// held every request the client sent (the built-in engine in the llama.cpp
// dialect, which has no e2e histogram), must not read as requests waiting
// between the two, neither in the final reconciliation nor live after a
// couple of scrapes. The idle scrapes that open the window (the probe, the
// phase's opening snapshot) stand for the instant before the load, not for
// a second of it. An engine that really holds fewer (a hidden queue in
// front of it) still warns.
func TestConcurrencyAtScrapeEdges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		dialect string
		wait    time.Duration // a hidden queue in front of the engine
		live    time.Duration // 0: the final reconciliation
		sev     Severity
		verdict string
		checks  map[string][2]float64 // evidence key → {want, tolerance}
	}{
		{name: "llamacpp final", dialect: "llamacpp", sev: Info, verdict: "they agree",
			checks: map[string][2]float64{"client_inflight_mean": {4, 0.15}, "server_inflight_mean": {3.85, 0.15}, "server_gauge_inflight_mean": {4, 0.1}}},
		{name: "llamacpp live after two scrapes", dialect: "llamacpp", live: 2500 * time.Millisecond, sev: Info, verdict: "they agree"},
		{name: "llamacpp hidden queue final", dialect: "llamacpp", wait: 300 * time.Millisecond, sev: Warn, verdict: "not inside the engine",
			checks: map[string][2]float64{"server_inflight_mean": {0.9, 0.15}}},
		{name: "llamacpp hidden queue live", dialect: "llamacpp", wait: 300 * time.Millisecond, live: 2500 * time.Millisecond, sev: Warn, verdict: "not inside the engine"},
		// A dialect with neither an e2e histogram nor time counters is
		// judged by its gauges alone.
		{name: "gauges only final", dialect: "gauges-only", sev: Info, verdict: "they agree",
			checks: map[string][2]float64{"server_inflight_mean": {4, 0.1}}},
		{name: "gauges only live", dialect: "gauges-only", live: 2500 * time.Millisecond, sev: Info, verdict: "they agree"},
		{name: "gauges only hidden queue", dialect: "gauges-only", wait: 300 * time.Millisecond, sev: Warn, verdict: "not inside the engine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(tc.dialect)
			w.perUser, w.scrapeEvery, w.wait = 40, time.Second, tc.wait
			if tc.wait > 0 {
				w.perUser = 10
			}
			in := runLikeInput(w)
			var fs []Finding
			if tc.live > 0 {
				fs = liveAt(in, tc.live)
			} else {
				fs = Reconcile(in)
			}
			f := only(t, fs, IDConcurrency)
			if f.Severity != tc.sev || !strings.Contains(f.Verdict, tc.verdict) {
				t.Errorf("%s %q, want %s containing %q; evidence %v", f.Severity, f.Verdict, tc.sev, tc.verdict, f.Evidence)
			}
			for key, c := range tc.checks {
				if got, ok := f.Evidence[key]; !ok || math.Abs(got-c[0]) > c[1] {
					t.Errorf("evidence %s = %v (present %v), want %v ± %v", key, got, ok, c[0], c[1])
				}
			}
		})
	}
}

// TestGaugeInflight: the gauges' time average, from the scrapes strictly
// inside the window, linear between two of them, each end of the window at
// its nearest scrape: exact for a load that rises steadily, blind to the
// idle snapshots that open and close a run.
func TestGaugeInflight(t *testing.T) {
	t.Parallel()
	type read struct {
		at      float64 // seconds
		running float64
		failed  bool
	}
	s := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	for _, tc := range []struct {
		name          string
		before, after read
		rows          []read
		want          float64
		samples       int
	}{
		{name: "a steadily rising load", before: read{0, 0, false}, after: read{5, 50, false},
			rows: []read{{1, 10, false}, {2, 20, false}, {3, 30, false}, {4, 40, false}}, want: 25, samples: 4},
		{name: "idle probe and snapshots around the load", before: read{0, 0, false}, after: read{4.1, 0, false},
			rows: []read{{-0.01, 0, false}, {1, 4, false}, {2, 4, false}, {3, 4, false}, {4, 4, false}}, want: 4, samples: 4},
		{name: "a failed scrape is bridged", before: read{0, 0, false}, after: read{3.5, 0, false},
			rows: []read{{1, 4, false}, {2, 0, true}, {3, 4, false}}, want: 4, samples: 2},
		{name: "no scrape inside the window", before: read{0, 0, false}, after: read{0.5, 0, false}, want: 0, samples: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			row := func(r read) scrape.Row {
				if r.failed {
					return scrape.Row{Target: target, At: s(r.at), Error: "connection refused"}
				}
				return scrape.Row{Target: target, At: s(r.at), OK: true, Snapshot: &scrape.Snapshot{Dialect: "vllm",
					Gauges: map[scrape.Concept]float64{scrape.RequestsRunning: r.running, scrape.RequestsWaiting: 0}}}
			}
			before, after := row(tc.before), row(tc.after)
			rows := []scrape.Row{before}
			for _, r := range tc.rows {
				rows = append(rows, row(r))
			}
			rows = append(rows, after)
			a := analyse(Input{Rows: rows, Dialect: "vllm",
				Windows: []Window{{Name: "main", Measured: true, Start: before.At, End: after.At, Before: &before, After: &after}}})
			g := a.gaugeInflight()
			if math.Abs(g.running+g.waiting-tc.want) > 1e-9 || g.samples != tc.samples {
				t.Errorf("mean %v over %d scrapes, want %v over %d", g.running+g.waiting, g.samples, tc.want, tc.samples)
			}
		})
	}
}
