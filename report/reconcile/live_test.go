package reconcile

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

// replay feeds a Live with the world's records and periodic scrapes in the
// order a recorder would see them (by end time and scrape time) up to now.
func replay(w *world, l *Live, now time.Duration, edit func(*scrape.Row)) {
	w.build()
	recs := slices.Clone(w.records)
	slices.SortFunc(recs, func(a, b client.Record) int { return compareDur(a.End, b.End) })
	i := 0
	for t := time.Duration(0); t <= now; t += w.scrapeEvery {
		for i < len(recs) && recs[i].End <= t {
			l.AddRecord(recs[i])
			i++
		}
		row := w.row(t)
		if edit != nil {
			edit(&row)
		}
		l.AddRow(row)
	}
	for i < len(recs) && recs[i].End <= now {
		l.AddRecord(recs[i])
		i++
	}
}

func TestLive(t *testing.T) {
	t.Parallel()
	const now = 1500 * time.Millisecond
	for _, tc := range []struct {
		name   string
		world  func(*world)
		edit   func(*scrape.Row)
		id     string
		sev    Severity
		substr string
	}{
		{name: "clean", id: IDRequestConservation, sev: Info, substr: "agree"},
		{name: "clean concurrency", id: IDConcurrency, sev: Info, substr: "they agree"},
		{name: "clean tokens, requests in flight at both edges", id: IDTokenConservation, sev: Info, substr: "agree"},
		{name: "tokenizer counts differently", world: func(w *world) { w.promptSkew = 30 }, id: IDTokenConservation, sev: Warn, substr: "prompt tokens differ"},
		{name: "foreign traffic", world: func(w *world) { w.foreign = 30 }, id: IDForeignTraffic, sev: Warn, substr: "did not send"},
		{name: "hidden cap", world: func(w *world) { w.wait = 200 * time.Millisecond }, id: IDConcurrency, sev: Warn, substr: "not inside the engine"},
		{name: "dead target", edit: func(r *scrape.Row) {
			if r.At > 700*time.Millisecond {
				*r = failed(*r, "connection refused")
			}
		}, id: IDScrapeDead, sev: Fail, substr: "stopped answering"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld("vllm")
			if tc.world != nil {
				tc.world(w)
			}
			l := NewLive(time.Second, "vllm")
			replay(w, l, now, tc.edit)
			fs := l.Findings(now, 0)
			f := only(t, fs, tc.id)
			if f.Severity != tc.sev || !strings.Contains(f.Verdict, tc.substr) {
				t.Errorf("%s %s, want %s containing %q\n%s", f.Severity, f.Verdict, tc.sev, tc.substr, dump(fs))
			}
			if tc.name == "clean" && Worst(fs) != Info {
				t.Errorf("clean live window has warnings:\n%s", dump(fs))
			}
		})
	}
}

// TestLiveBounded: the live reconciler keeps only what its window holds.
func TestLiveBounded(t *testing.T) {
	t.Parallel()
	w := newWorld("sglang")
	l := NewLive(300*time.Millisecond, "sglang")
	replay(w, l, 2*time.Second, nil)
	for _, r := range l.records.items[l.records.head:] { // what it keeps, before Findings compacts it
		if r.End < 2*time.Second-300*time.Millisecond-w.scrapeEvery {
			t.Fatalf("record ending at %v kept in a 300 ms window at 2 s", r.End)
		}
	}
	if n := len(l.rows.items) - l.rows.head; n > 4 {
		t.Errorf("%d rows kept in a 300 ms window scraped every 100 ms", n)
	}
	if len(l.Findings(2*time.Second, 0)) == 0 {
		t.Error("no findings")
	}
}

// TestLiveWithoutScrapes: with fewer than two usable scrapes only scrape
// health can be said.
func TestLiveWithoutScrapes(t *testing.T) {
	t.Parallel()
	l := NewLive(time.Second, "")
	l.AddRecord(client.Record{ID: "a", Sent: time.Millisecond, FirstToken: 5 * time.Millisecond, End: 9 * time.Millisecond})
	if fs := l.Findings(time.Second, 0); len(fs) != 0 {
		t.Errorf("findings without scrapes:\n%s", dump(fs))
	}
	l.AddRow(failed(scrape.Row{Target: target, At: 500 * time.Millisecond}, "refused"))
	l.AddRow(failed(scrape.Row{Target: target, At: 600 * time.Millisecond}, "refused"))
	fs := l.Findings(time.Second, 0)
	if len(fs) != 1 || fs[0].ID != IDScrapeDead {
		t.Errorf("want only scrape_dead:\n%s", dump(fs))
	}
}
