package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/report/latencytable"
	"github.com/llmbench-org/llmbench/rundir"
)

// TestLatencyTable: the one model the three renderers draw decides the rows
// (TTFC only when it differs from TTFT; the engine's own histograms apart,
// sorted), the columns (the summary's percentiles, else the defaults) and
// every cell (a quantile the summary lacks is not 0; the engine's side says
// why it is empty).
func TestLatencyTable(t *testing.T) {
	t.Parallel()
	measured := Dist{N: 3, Mean: 0.2, P50: 0.1, P90: 0.3, P99: 0.4}
	hist := ServerDist{N: 7, Mean: 0.25, P50: BucketEstimate{Value: 0.2, Bucket: [2]float64{0.1, 0.5}},
		P90: BucketEstimate{Value: 1, Bucket: [2]float64{1, 0}, AboveTop: true}, P99: BucketEstimate{Value: 1, Bucket: [2]float64{1, 0}, AboveTop: true}}
	var s Summary
	s.Client.Latency = Latencies{TTFT: measured, TTFC: measured, ITL: measured, E2E: measured} // no TPOT samples
	s.Client.FirstTokenNotContent = 1
	s.Percentiles = []float64{50, 99.9}
	s.Server = &ServerSide{Latency: map[string]ServerDist{"ttft": hist, "queue": hist, "decode": {N: 1}}}

	got := LatencyTable(s)
	if !cmp.Equal(got.Percentiles, []float64{50, 99.9}) || got.NoServer {
		t.Fatalf("columns %v, no server %v", got.Percentiles, got.NoServer)
	}
	var names []string
	for _, r := range got.Rows {
		names = append(names, r.Name)
	}
	if want := []string{"TTFT", "TTFC", "ITL", "TPOT", "E2E"}; !cmp.Equal(names, want) {
		t.Fatalf("rows %v, want %v", names, want)
	}
	ttft, ttfc, itl, tpot := got.Rows[0], got.Rows[1], got.Rows[2], got.Rows[3]
	// p99.9 is not in a summary without Quantiles: not computed, never 0.
	if want := (latencytable.Client{N: 3, Mean: 0.2, Quantiles: []latencytable.Value{{V: 0.1, OK: true}, {}}}); !cmp.Equal(ttft.Client, want) {
		t.Errorf("TTFT client %+v, want %+v", ttft.Client, want)
	}
	if want := (latencytable.Server{N: 7, Mean: 0.25, Quantiles: []latencytable.Bucket{{Value: 0.2, Low: 0.1, High: 0.5, OK: true}, {}}}); !cmp.Equal(ttft.Server, want) {
		t.Errorf("TTFT server %+v, want %+v", ttft.Server, want)
	}
	if ttfc.Server.State != latencytable.NotKept || itl.Server.State != latencytable.Absent {
		t.Errorf("TTFC's engine side %q, ITL's %q", ttfc.Server.State, itl.Server.State)
	}
	if tpot.Client.N != 0 || tpot.Client.Quantiles[0].OK {
		t.Errorf("TPOT without samples: %+v", tpot.Client)
	}
	if len(got.EngineOnly) != 2 || got.EngineOnly[0].Name != "decode" || got.EngineOnly[1].Name != "queue" || got.EngineOnly[1].Server.N != 7 {
		t.Errorf("engine-only rows %+v, want decode then queue", got.EngineOnly)
	}

	// The defaults, no TTFC row when it equals TTFT, no /metrics view.
	s.Percentiles, s.Server, s.Client.FirstTokenNotContent = nil, nil, 0
	got = LatencyTable(s)
	if !cmp.Equal(got.Percentiles, rundir.DefaultPercentiles) || !got.NoServer || len(got.Rows) != 4 || len(got.EngineOnly) != 0 {
		t.Fatalf("without a server: %+v", got)
	}
	for _, r := range got.Rows {
		if r.Name == "TTFC" || r.Server.State != latencytable.NoMetrics {
			t.Errorf("row %s: engine side %q", r.Name, r.Server.State)
		}
	}
}

// TestLatencyTableRendered: the terminal and Markdown tables show a
// quantile the summary lacks as a dash, as the HTML page always did (they
// printed 0.0), and an engine quantile with its bucket.
func TestLatencyTableRendered(t *testing.T) {
	t.Parallel()
	var s Summary
	s.Client.Latency.TTFT = Dist{N: 3, Mean: 0.2, P50: 0.1}
	s.Percentiles = []float64{50, 99.9}
	s.Server = &ServerSide{Latency: map[string]ServerDist{"ttft": {N: 7, Mean: 0.25, P50: BucketEstimate{Value: 0.2, Bucket: [2]float64{0.1, 0.5}}}}}
	var text, md bytes.Buffer
	if err := renderLatencyText(&text, LatencyTable(s)); err != nil {
		t.Fatal(err)
	}
	if err := RenderMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	// The client's row (n, mean, quantiles), the engine's under it: a
	// summary without intervals shows none.
	lines := strings.Split(text.String(), "\n")
	if want := []string{"TTFT", "3", "200.0", "100.0", "—"}; !cmp.Equal(strings.Fields(lines[1]), want) {
		t.Errorf("terminal TTFT row %q, want %q", lines[1], want)
	}
	if want := []string{"engine", "7", "250.0", "200.0", "[100.0–500.0]", "—"}; !cmp.Equal(strings.Fields(lines[2]), want) {
		t.Errorf("terminal TTFT engine row %q, want %q", lines[2], want)
	}
	for _, want := range []string{"| TTFT | 3 | 200.0 | 100.0 | — |\n", "| TTFT engine | 7 | 250.0 | 200.0 [100.0–500.0] | — |\n"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
}
