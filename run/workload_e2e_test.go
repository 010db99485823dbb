package run

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// runForSummary runs a scenario file through the whole command and returns
// the summary it wrote.
func runForSummary(t *testing.T, yaml string) report.Summary {
	t.Helper()
	s, _ := runForSummaryAndDir(t, yaml)
	return s
}

// runForSummaryAndDir is runForSummary that also returns the run directory.
func runForSummaryAndDir(t *testing.T, yaml string) (report.Summary, string) {
	t.Helper()
	quiet.Busy(t)
	path := writeScenario(t, yaml)
	cio, _, stderr := testIO(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir, err := runScenario(ctx, runOpts{scenario: path, runsDir: t.TempDir(), output: "plain", every: time.Second}, cio)
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	s, err := report.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile)) {
		if !r.OK() {
			t.Logf("failed request %s: %s %s (status %d, %d chunks, finish %q)", r.ID, r.ErrorClass, r.Error, r.Status, len(r.Chunks), r.FinishReason)
		}
	}
	return s, dir
}

// TestSweepReportsTheEngineCapacity: a rate sweep through `llmbench run`
// against an engine of 4 running requests reports throughput rising, then
// saturating, and a capacity within 15 % of the engine's modelled one.
//
// The sweep measures in real time, and on a machine whose cores other
// processes take (`go test ./...` compiling the next packages) the engine's
// steps and the client's timers run late: a miss then is run again, one on a
// quiet machine fails (quiet.Retry). The engine runs apart, in a child
// process: its CPU is the test's own, not a neighbour's.
func TestSweepReportsTheEngineCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a sweep against the built-in engine")
	}
	t.Parallel()
	const yaml = `
name: sweep-e2e
engine:
  kind: sim
  preset: tiny
  sim: {max_running_requests: 4, decode_base: 8ms}  # passes long against timer overshoot on a loaded machine
workload:
  sweep: {rates: [3, 6, 10, 24]}
  arrival: constant
  duration: 3s
  prompt_tokens: 64
  output_tokens: 32
slo: {ttft: 150ms}
scrape:
  interval: 250ms
`
	sc, _, err := Load(writeScenario(t, yaml), nil)
	if err != nil {
		t.Fatal(err)
	}
	params, _ := simSettings(sc)
	capacity := params.Capacity(64, 32)
	quiet.Retry{Within: 3 * time.Minute, Children: true, QuietMisses: 2}.Run(t, func(int) []string {
		s, dir := runForSummaryAndDir(t, yaml)
		return sweepMisses(t, s, dir, capacity)
	})
}

// sweepMisses is what a run of TestSweepReportsTheEngineCapacity's sweep
// found out of bounds: an engine of the given capacity (requests/s).
func sweepMisses(t *testing.T, s report.Summary, dir string, capacity float64) []string {
	t.Helper()
	if s.Sweep == nil || len(s.Sweep.Points) != 4 {
		t.Fatalf("sweep %+v, want 4 points", s.Sweep)
	}
	var misses []string
	miss := func(format string, a ...any) { misses = append(misses, fmt.Sprintf(format, a...)) }
	for _, p := range s.Sweep.Points[:2] {
		if math.Abs(p.RequestsPerS/p.Load-1) > 0.2 {
			miss("%s: %.2f/s achieved for %g/s offered, well below capacity", p.Phase, p.RequestsPerS, p.Load)
		}
	}
	sat := s.Sweep.Saturation
	if !sat.Found {
		return append(misses, fmt.Sprintf("no saturation reported: %+v", sat))
	}
	if math.Abs(sat.Capacity/capacity-1) > 0.15 {
		miss("reported capacity %.2f/s, the engine's is %.2f/s: more than 15 %% apart", sat.Capacity, capacity)
	}
	last := s.Sweep.Points[3]
	if last.QueueMean <= s.Sweep.Points[0].QueueMean {
		miss("the server's queue did not grow past saturation: %+v", s.Sweep.Points)
	}

	// Goodput: below capacity nearly every request meets the 150 ms TTFT
	// objective; past it the queue makes most of them miss, so goodput falls
	// far below throughput.
	first := s.Sweep.Points[0]
	if first.GoodputPerS == nil || last.GoodputPerS == nil {
		t.Fatalf("sweep points without goodput: %+v", s.Sweep.Points)
	}
	if *first.GoodputPerS < 0.9*first.RequestsPerS {
		miss("%s: goodput %.2f/s of %.2f/s below capacity", first.Phase, *first.GoodputPerS, first.RequestsPerS)
	}
	if pk := s.Sweep.GoodputPeak; pk == nil || pk.RequestsPerS > capacity*1.15 || pk.Phase == last.Phase {
		miss("goodput peak %+v: want one within the engine's capacity %.2f/s, before the overloaded %s", pk, capacity, last.Phase)
	}
	if *last.GoodputPerS > 0.6*last.RequestsPerS {
		miss("%s: goodput %.2f/s of %.2f/s past capacity: the queue should make most requests miss 150 ms", last.Phase, *last.GoodputPerS, last.RequestsPerS)
	}
	// And the count of good requests is the engine's: its ground truth
	// (arrival to first token flushed) puts the same requests within 150 ms,
	// give or take those within the client's timing error of the bound.
	g := s.Client.Goodput
	if g == nil {
		t.Fatal("the summary has no goodput though the scenario sets an slo")
	}
	truthGood := 0
	for _, tr := range readJSONL[sim.RequestTruth](t, filepath.Join(dir, rundir.TruthFile)) {
		if tr.FirstTokenFlushed > 0 && tr.FirstTokenFlushed-tr.Arrival <= 150*time.Millisecond {
			truthGood++
		}
	}
	t.Logf("capacity %.2f/s (the engine's %.2f/s); goodput per point: first %.2f of %.2f req/s, last %.2f of %.2f; good %d, ground truth %d",
		sat.Capacity, capacity, *first.GoodputPerS, first.RequestsPerS, *last.GoodputPerS, last.RequestsPerS, g.Good, truthGood)
	if tol := max(2, s.Client.Requests.Sent/50); abs(g.Good-truthGood) > tol {
		miss("goodput %+v; the engine's ground truth has %d requests within 150 ms (tolerance %d)", g, truthGood, tol)
	}
	return misses
}

func abs(x int) int { return max(x, -x) }

// TestCappedOpenLoopReportsDroppedArrivals: an open loop whose rate needs more
// concurrency than its cap allows says so in the summary instead of queueing
// silently.
func TestCappedOpenLoopReportsDroppedArrivals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs against the built-in engine")
	}
	t.Parallel()
	s := runForSummary(t, `
name: capped
engine:
  kind: sim
  preset: tiny
workload:
  rate: 40
  arrival: constant
  duration: 2s
  max_concurrency: 2
  when_capped: drop
  prompt_tokens: 32
  output_tokens: 200
`)
	if s.Health.DroppedArrivals == 0 {
		t.Fatalf("no dropped arrivals reported for 40/s capped at 2 streams of 200 tokens: %+v", s.Health)
	}
	if s.Health.Valid {
		t.Errorf("a run that dropped %d arrivals must not be marked valid", s.Health.DroppedArrivals)
	}
	if got := s.Client.Requests.Sent + s.Health.DroppedArrivals; got != 80 {
		t.Errorf("sent %d + dropped %d = %d, want every one of the 80 arrivals accounted for", s.Client.Requests.Sent, s.Health.DroppedArrivals, got)
	}
}
