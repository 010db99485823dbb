package workload_test

// End-to-end tests of the workload against the built-in engine: the Driver
// sends through the real client to the real simulated engine on loopback.
// They are in an external test package so that package workload itself
// never imports the client.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/report/saturation"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/workload"
)

// bench is one run of a scenario against the built-in engine it describes.
type bench struct {
	plan    *workload.Plan
	result  workload.Result
	runErr  error
	records []client.Record
}

// runAgainstSim starts the scenario's built-in engine, drives the plan
// through the client, and returns what happened.
func runAgainstSim(t *testing.T, sc scenarios.Scenario) bench {
	t.Helper()
	plan, err := workload.NewPlan(sc)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := sim.New(sim.Config{Dialect: sc.Engine.Dialect, Params: *sc.Engine.Sim.(*sim.Params)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ep, err := eng.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Stop(context.Background())
	start := time.Now()
	cl, err := client.New(client.Config{BaseURL: ep.BaseURL, Model: ep.Model, Dialect: ep.Dialect, Start: start, MaxConns: 64, IncludeUsage: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var mu sync.Mutex
	var b bench
	b.plan = plan
	send := workload.OutcomeSenderFunc(func(ctx context.Context, r workload.Request) workload.Outcome {
		rec := cl.Do(ctx, asClientRequest(r))
		mu.Lock()
		b.records = append(b.records, rec)
		mu.Unlock()
		return workload.Outcome{OK: rec.OK(), Canceled: rec.ErrorClass == client.ErrCanceled}
	})
	b.result, b.runErr = (&workload.Driver{Plan: plan, Sender: send, Start: start}).Run(ctx, nil)
	return b
}

func exampleScenario(t *testing.T, name string) scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.LoadFS(scenarios.Examples(), name)
	if err == nil {
		err = sc.ResolveEngine(sim.Model{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func inlineScenario(t *testing.T, src string) scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Parse("e2e.yaml", []byte(src))
	if err == nil {
		err = sc.ResolveEngine(sim.Model{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// checkTokenTargets requires the engine's usage to equal the plan's targets
// exactly: the method of decision 0401 has no error against the built-in
// engine's tokenizer.
func checkTokenTargets(t *testing.T, b bench) {
	t.Helper()
	for _, rec := range b.records {
		if !rec.OK() {
			t.Errorf("request %s failed: %s %s", rec.ID, rec.ErrorClass, rec.Error)
			continue
		}
		want := b.plan.Request(rec.Index)
		if rec.PromptTokens != want.PromptTokens || rec.OutputTokens != want.MaxTokens {
			t.Errorf("request %s: usage %d prompt / %d output tokens, targets %d / %d",
				rec.ID, rec.PromptTokens, rec.OutputTokens, want.PromptTokens, want.MaxTokens)
		}
	}
}

// TestDatasetsAgainstTheBuiltInEngine runs the dataset examples briefly and
// checks the token targets against the engine's usage, and that shared text
// is shared: the engine's prefix cache reports hits.
func TestDatasetsAgainstTheBuiltInEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end against the built-in engine")
	}
	t.Parallel()
	quiet.Busy(t) // loads the machine: a timing-sensitive test elsewhere waits for it
	tests := []struct {
		example   string
		shorten   func(*scenarios.Scenario)
		minCached int // some request must have at least this many cached prompt tokens
	}{
		{"shared-prefix.yaml", func(s *scenarios.Scenario) { s.Workload.Duration = 1500 * time.Millisecond }, 1008},
		{"multi-turn.yaml", func(s *scenarios.Scenario) {
			s.Workload.Duration = 2 * time.Second
			s.Workload.ThinkTime = scenarios.Think{Dist: scenarios.DistFixed, Value: 50 * time.Millisecond}
		}, 200},
		{"trace-replay.yaml", func(s *scenarios.Scenario) { s.Workload.Trace.TimeScale = 0.05 }, 512},
		{"poisson-ramp.yaml", func(s *scenarios.Scenario) {
			s.Workload.Warmup = nil
			s.Workload.Stages = []scenarios.Stage{s.Workload.Stages[0]} // the first ramp only
			s.Workload.Stages[0].Duration = 2 * time.Second
			s.Workload.Limits = scenarios.Limits{Duration: 2 * time.Second}
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.example, func(t *testing.T) {
			sc := exampleScenario(t, tt.example)
			tt.shorten(&sc)
			b := runAgainstSim(t, sc)
			if b.runErr != nil {
				t.Fatal(b.runErr)
			}
			if len(b.records) < 5 {
				t.Fatalf("only %d requests ran", len(b.records))
			}
			checkTokenTargets(t, b)
			cached := 0
			for _, rec := range b.records {
				cached = max(cached, rec.CachedTokens)
			}
			if cached < tt.minCached {
				t.Errorf("largest cached prefix %d tokens, want at least %d: shared text is not shared", cached, tt.minCached)
			}
		})
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s[len(s)/2]
}

// TestSweepSaturatesAtTheEngineCapacity: a rate sweep against an engine of
// 4 running requests shows throughput following the rate, then flattening;
// saturation.Detect reports a capacity within 15 % of the engine's.
//
// The sweep measures in real time, and on a machine whose cores other
// processes take (`go test ./...` compiling the next packages) the engine's
// steps and the client's timers run late: a miss then is run again, one on a
// quiet machine fails (quiet.Retry).
func TestSweepSaturatesAtTheEngineCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end against the built-in engine")
	}
	t.Parallel()
	quiet.Busy(t) // loads the machine: a timing-sensitive test elsewhere waits for it
	sc := inlineScenario(t, `
name: sweep-e2e
engine:
  kind: sim
  preset: tiny
  sim: {max_running_requests: 4, decode_base: 8ms}  # passes long against timer overshoot on a loaded machine
workload:
  sweep: {rates: [3, 6, 10, 24]}
  arrival: constant
  duration: 2s
  prompt_tokens: 64
  output_tokens: 32
`)
	capacity := sc.Engine.Sim.(*sim.Params).Capacity(64, 32) // ≈ 15.3 requests/s
	quiet.Retry{Within: 3 * time.Minute, QuietMisses: 2}.Run(t, func(int) []string {
		b := runAgainstSim(t, sc)
		if b.runErr != nil {
			t.Fatal(b.runErr)
		}
		checkTokenTargets(t, b)
		return saturationMisses(t, b, capacity)
	})
}

// saturationMisses is what a sweep against an engine of the given capacity
// (requests/s) found out of bounds.
func saturationMisses(t *testing.T, b bench, capacity float64) []string {
	t.Helper()
	ttft := map[string][]float64{}
	for _, rec := range b.records {
		if d, ok := rec.TTFT(); ok {
			ttft[rec.Phase] = append(ttft[rec.Phase], d.Seconds())
		}
	}
	var points []saturation.Point
	for _, ph := range b.result.Phases {
		points = append(points, saturation.Point{Phase: ph.Name, Load: ph.Rate, Throughput: ph.Throughput(),
			Latency: median(ttft[ph.Name]), Queue: math.NaN()})
		t.Logf("%s: offered %g/s, achieved %.2f/s, TTFT p50 %.3fs, sent %d", ph.Name, ph.Rate, ph.Throughput(), median(ttft[ph.Name]), ph.Sent)
	}
	var misses []string
	// Below capacity, throughput follows the offered rate.
	for _, p := range points[:3] {
		if math.Abs(p.Throughput/p.Load-1) > 0.15 {
			misses = append(misses, fmt.Sprintf("%s: %.2f/s achieved for %g/s offered, below capacity", p.Phase, p.Throughput, p.Load))
		}
	}
	sat := saturation.Detect(points)
	t.Logf("saturation: %+v; engine capacity %.2f/s", sat, capacity)
	if !sat.Found || sat.Phase != "rate-10" {
		return append(misses, fmt.Sprintf("saturation %+v, want found with the knee at rate-10", sat))
	}
	if math.Abs(sat.Capacity/capacity-1) > 0.15 {
		misses = append(misses, fmt.Sprintf("measured capacity %.2f/s, the engine's is %.2f/s: more than 15 %% apart", sat.Capacity, capacity))
	}
	return misses
}

// maxOverlap is the largest number of records in flight at once, by their
// send and end times on the run clock.
func maxOverlap(recs []client.Record) int {
	type edge struct {
		at    time.Duration
		delta int
	}
	var edges []edge
	for _, r := range recs {
		edges = append(edges, edge{r.Sent, 1}, edge{r.End, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.delta - b.delta // ends before starts at the same instant
	})
	n, peak := 0, 0
	for _, e := range edges {
		n += e.delta
		peak = max(peak, n)
	}
	return peak
}

// TestCappedOpenLoopReportsDroppedAndLate: 20 requests/s of about 0.27 s each
// need 5 or 6 in flight; a cap of 2 must show in the counts, never in silence.
func TestCappedOpenLoopReportsDroppedAndLate(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end against the built-in engine")
	}
	t.Parallel()
	quiet.Busy(t) // loads the machine: a timing-sensitive test elsewhere waits for it
	for _, policy := range []string{"drop", "wait"} {
		t.Run(policy, func(t *testing.T) {
			sc := inlineScenario(t, `
name: cap-e2e
engine: {kind: sim, preset: tiny}
workload:
  rate: 20
  arrival: constant
  duration: 2s
  max_concurrency: 2
  when_capped: `+policy+`
  prompt_tokens: 32
  output_tokens: 128
`)
			b := runAgainstSim(t, sc)
			if b.runErr != nil {
				t.Fatal(b.runErr)
			}
			checkTokenTargets(t, b)
			ph := b.result.Phases[0]
			t.Logf("%s: sent %d, late %d, dropped %d", policy, ph.Sent, ph.Late, ph.Dropped)
			if ph.Sent+ph.Dropped != 40 || len(b.records) != ph.Sent {
				t.Errorf("sent %d + dropped %d of 40 arrivals, %d records: every arrival must be accounted for", ph.Sent, ph.Dropped, len(b.records))
			}
			if peak := maxOverlap(b.records); peak > 2 {
				t.Errorf("%d requests in flight at once, above the cap of 2", peak)
			}
			for _, rec := range b.records {
				if want := ph.Start + time.Duration(rec.Index)*50*time.Millisecond; rec.Intended != want {
					t.Errorf("request %d: intended %v, want its arrival time %v", rec.Index, rec.Intended, want)
				}
			}
			switch policy {
			case "drop":
				if ph.Dropped < 15 {
					t.Errorf("%d dropped: 2 slots of about 0.27 s serve about 15 of 40 arrivals", ph.Dropped)
				}
			case "wait":
				// Each request holds its slot for at least 128 decode passes
				// of the preset's 2 ms (256 ms; a busy machine only makes it
				// longer), and arrival k ≥ 2 needs the slot of arrival k-2,
				// due 100 ms before it: it starts at least 156 ms late, or
				// is dropped at the deadline. How many are sent in the 2 s is
				// the machine's speed; that all of them past the first two
				// are late is the cap's, on any machine.
				late := 0
				for _, rec := range b.records {
					if rec.ScheduleLag() > 100*time.Millisecond {
						late++
					}
				}
				if late < ph.Sent-2 || ph.Late < ph.Sent-2 || ph.Late > ph.Sent || ph.Late+ph.Dropped < 38 {
					t.Errorf("sent %d, dropped %d: %d counted late, %d records more than 100 ms behind their intended time; want every arrival after the first two late (%d) or dropped (%d in all)",
						ph.Sent, ph.Dropped, ph.Late, late, max(0, ph.Sent-2), 38)
				}
			}
		})
	}
}

// asClientRequest is the client's view of a planned request.
func asClientRequest(r workload.Request) client.Request {
	msgs := make([]client.Message, len(r.Messages))
	for i, m := range r.Messages {
		msgs[i] = client.Message{Role: m.Role, Content: m.Content}
	}
	return client.Request{ID: r.ID, Index: r.Index, Phase: r.Phase, Intended: r.Intended, Messages: msgs,
		PromptTokens: r.PromptTokens, MaxTokens: r.MaxTokens, MinTokens: r.MinTokens, IgnoreEOS: r.IgnoreEOS}
}
