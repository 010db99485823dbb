package html

import (
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// TestOutageBands: a run that met an outage shades it on every run-clock
// chart, with its length and attempts as the band's title, and the notes
// say what the red bands are; a run without one draws none.
func TestOutageBands(t *testing.T) {
	t.Parallel()
	var recs []client.Record
	for i := range 40 {
		at := 0.1 * float64(i)
		if at >= 1.5 && at < 2 {
			recs = append(recs, client.Record{Phase: "main", Sent: sec(at), End: sec(at + 0.001), ErrorClass: client.ErrConnect, Error: "refused"})
			continue
		}
		recs = append(recs, rec("main", at, at+0.02, at+0.08, at+0.03, at+0.05))
	}
	meta := rundir.RunMeta{Scenario: "x", Phases: []rundir.PhaseMeta{{Name: "main", Measured: true, End: sec(4.1)}}}
	s := report.Compute(meta, recs, nil, nil, 0)
	if s.Outages == nil {
		t.Fatal("no outage computed")
	}
	doc := renderString(t, Input{Summary: s, Records: recs})
	if err := wellFormed(doc); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(doc, `<rect class="outage"`); n < 4 {
		t.Errorf("%d outage bands, want one on each run-clock chart", n)
	}
	if !strings.Contains(doc, "outage at 1.5") || !strings.Contains(doc, "5 failed attempts") || !strings.Contains(doc, "Red bands: the outages") {
		t.Error("the bands do not say when, how long and how many attempts, or the notes do not explain them")
	}
	calm := report.Compute(meta, recs[:10], nil, nil, 0)
	if doc := renderString(t, Input{Summary: calm, Records: recs[:10]}); strings.Contains(doc, `class="outage"`) {
		t.Error("outage bands in a run that met none")
	}
}
