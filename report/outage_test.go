package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
)

// TestOutagesSection: a run whose engine refused connections for a while
// has one outage in its summary with its attempts, and figures outside it
// that leave out the requests it touched and its time; the text and
// Markdown reports say both. A run without outages has no section.
func TestOutagesSection(t *testing.T) {
	ms := time.Millisecond
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	meta := rundir.RunMeta{ID: "o", Scenario: "o", StartedAt: start, Ended: start.Add(10 * time.Second),
		Phases: []rundir.PhaseMeta{{Name: "main", Measured: true, Start: 0, End: 10 * time.Second}}}
	var recs []client.Record
	add := func(r client.Record) {
		r.ID, r.Phase = fmt.Sprint(len(recs)), "main"
		recs = append(recs, r)
	}
	ok := func(sent time.Duration) client.Record {
		return client.Record{Sent: sent, Status: 200, FirstByte: sent + 5*ms, FirstToken: sent + 10*ms, End: sent + 100*ms,
			OutputTokens: 10, Chunks: []client.Chunk{{At: sent + 10*ms}}}
	}
	for s := time.Duration(0); s < 4*time.Second; s += 200 * ms {
		add(ok(s))
	}
	slow := ok(3900 * ms) // in flight when the engine went down: outside no more
	slow.End = 4500 * ms
	add(slow)
	for s := 4000 * ms; s < 5000*ms; s += 100 * ms {
		add(client.Record{Sent: s, End: s + ms, ErrorClass: client.ErrConnect, Error: "connection refused"})
	}
	for s := 5000 * ms; s < 9900*ms; s += 200 * ms {
		add(ok(s))
	}
	s := Compute(meta, recs, nil, nil, 0)
	o := s.Outages
	if o == nil || o.Count != 1 {
		t.Fatalf("outages %+v, want one", o)
	}
	w := o.Windows[0]
	if w.Start != 4 || w.Length != 1 || w.Attempts != 10 || w.Affected != 10 || w.Open {
		t.Errorf("window %+v, want 4 s for 1 s with 10 attempts", w)
	}
	// The slow one was in flight as the engine went down; the one sent at
	// 5 s ends the window (its send is the window's end: it touched it).
	wantOK := s.Client.Requests.OK - 2
	if got := o.Outside; got.OK != wantOK || got.Duration != 9 || got.Throughput != float64(wantOK)/9 || got.E2E.N != wantOK || got.Covers == "" {
		t.Errorf("outside %+v, want %d requests over 9 s", got, wantOK)
	}
	var text, md bytes.Buffer
	if err := RenderText(&text, s); err != nil {
		t.Fatal(err)
	}
	if err := RenderMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		for _, want := range []string{"1 outage, 1.00 s in all: 10 failed attempts", "Outside outages", "measured phases less the outage windows"} {
			if !strings.Contains(strings.ToLower(out), strings.ToLower(want)) {
				t.Errorf("%s report lacks %q:\n%s", name, want, out)
			}
		}
	}
	if s := Compute(meta, recs[:5], nil, nil, 0); s.Outages != nil {
		t.Errorf("outages %+v in a run that always reached its engine", s.Outages)
	}
}
