package html

import (
	"testing"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// TestSparseRuns renders runs with next to nothing in them: a page, never
// a panic or a broken document.
func TestSparseRuns(t *testing.T) {
	t.Parallel()
	one := rec("main", 0.1, 0.3, 0.9, 0.3, 0.6, 0.9)
	failedOnly := client.Record{Phase: "main", Sent: sec(0.1), End: sec(0.2), ErrorClass: client.ErrConnect, Error: "dial tcp: refused"}
	tests := []struct {
		name string
		in   Input
	}{
		{"empty", Input{}},
		{"one request, no phases", Input{Records: []client.Record{one}}},
		{"only failures", Input{Records: []client.Record{failedOnly}, Rows: []scrape.Row{{Target: "t", At: sec(0.5), Error: "refused"}}}},
		{"a computed run of one request", Input{
			Summary: report.Compute(rundir.RunMeta{Scenario: "x", Phases: []rundir.PhaseMeta{{Name: "main", Measured: true, End: sec(1)}}},
				[]client.Record{one}, nil, nil, 0),
			Records: []client.Record{one}}},
		{"a sweep with one point", Input{Summary: report.Summary{Sweep: &report.SweepResult{Points: []report.SweepPoint{{Phase: "p", Load: 0, QueueMean: -1}}}}}},
		{"a server without histograms", Input{Summary: report.Summary{Server: &report.ServerSide{Latency: map[string]report.ServerDist{
			"ttft": {N: 1, CDF: []scrape.CDFPoint{{Bound: 0.1, Server: 1, Client: 1}}}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := renderString(t, tt.in)
			if err := wellFormed(doc); err != nil {
				t.Fatal(err)
			}
			if bad := selfContained(parse(t, doc)); len(bad) > 0 {
				t.Fatal(bad)
			}
		})
	}
}
