package run

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/capacity"
	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/interval"
	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/rundir"
)

// searchScenario is the capacity search the end-to-end tests run: the
// engine's passes are long (10 ms + 3 ms per running request) against the
// host's timer overshoot, and TPOT, which grows with the batch, binds the
// SLO below the engine's saturation.
const searchScenario = `
name: search-e2e
seed: 5
engine:
  kind: sim
  preset: tiny
  sim: {decode_base: 10ms, decode_per_seq: 3ms, prefill_overhead: 1ms, prefill_per_token: 10us}
workload:
  search: {over: rate, min: 2, max: 40, tolerance: 5%, max_probes: 8}
  arrival: constant
  duration: 6s
  until: decided
  warmup: {duration: 2s, rate: 4}   # the child engine's and the connections' first requests
  prompt_tokens: 32
  output_tokens: 16
slo: {tpot: 50ms, ttft: 1s, target: 90%}
scrape:
  interval: 500ms
`

// searchProbe is the scenario's probe length.
const searchProbe = 6 * time.Second

// TestSearchFindsTheEngineCapacity is the acceptance of the capacity search
// against the built-in engine's ground truth (its model, swept finely in
// model time: modelCapacity): the search finds the capacity within 10 % in
// at most 8 probes, and constant-rate runs at 0.85× of it pass the SLO
// verdict and at 1.3× fail.
//
// The runs are in real time: on a machine whose cores other processes take,
// the engine's passes and the client's timers run late, TPOT grows and a
// verdict can miss; such a miss is run again, one on a quiet machine fails
// (quiet.Retry), and the retry is logged. The engine runs apart, in a child
// process: its CPU is the test's own.
func TestSearchFindsTheEngineCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a capacity search against the built-in engine")
	}
	sc, _, err := Load(writeScenario(t, searchScenario), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := simSettings(sc)
	obj := capacity.Objective{SLO: rundir.SLO{TTFT: sc.SLO.TTFT, TPOT: sc.SLO.TPOT}, Target: float64(sc.SLO.Target)}
	truth := modelCapacity(t, p, 32, 16, searchProbe, obj, 2, 40)
	quiet.Retry{Within: 5 * time.Minute, Children: true, QuietMisses: 2}.Run(t, func(n int) []string {
		if n > 1 {
			t.Logf("attempt %d: the last one missed while other processes took the machine", n)
		}
		var misses []string
		s, _ := runForSummaryAndDir(t, searchScenario)
		sr := s.Search
		switch {
		case sr == nil:
			t.Fatal("the summary has no search")
		case sr.ProbesUsed > 8 || len(sr.Probes) != sr.ProbesUsed:
			misses = append(misses, fmt.Sprintf("%d probes (%d listed), want at most 8", sr.ProbesUsed, len(sr.Probes)))
		case math.Abs(sr.Capacity/truth-1) > 0.10:
			misses = append(misses, fmt.Sprintf("capacity %s; the engine's is %.2f requests/s: more than 10 %% apart", sr, truth))
		}
		t.Logf("search: %s (the engine's: %.2f)", sr, truth)
		return append(misses, constantRateMisses(t, obj, truth)...)
	})
}

// constantRateMisses runs the search scenario's load at 0.85× and 1.3× the
// engine's capacity for a probe's length each and says what did not pass
// and fail.
func constantRateMisses(t *testing.T, obj capacity.Objective, truth float64) []string {
	yaml := strings.Replace(searchScenario, "search: {over: rate, min: 2, max: 40, tolerance: 5%, max_probes: 8}",
		fmt.Sprintf("phases: [{name: warmup, measured: false, rate: 4, arrival: constant, duration: 2s}, {name: under, rate: %.3f, arrival: constant, duration: 6s}, {name: over, rate: %.3f, arrival: constant, duration: 6s}]", 0.85*truth, 1.3*truth), 1)
	yaml = strings.Replace(yaml, "  arrival: constant\n  duration: 6s\n  until: decided\n", "", 1)
	yaml = strings.Replace(yaml, "  warmup: {duration: 2s, rate: 4}", "  # warmup as phases: {name: warmup, measured: false, rate: 4, arrival: constant, duration: 2s}", 1)
	_, dir := runForSummaryAndDir(t, yaml)
	tallies := map[string]*capacity.Tally{"under": {}, "over": {}}
	for _, r := range readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile)) {
		if tl := tallies[r.Phase]; tl != nil {
			tl.Add(obj.SLO, &r)
		}
	}
	var misses []string
	for phase, want := range map[string]interval.Verdict{"under": interval.Pass, "over": interval.Fail} {
		if d := obj.Decide(*tallies[phase], interval.Confidence); d.Verdict != want {
			misses = append(misses, fmt.Sprintf("%s the capacity: %s, want %s", phase, d, want))
		} else {
			t.Logf("%s the capacity: %s", phase, d)
		}
	}
	return misses
}

// A search's probes are named as it runs: a gate on one is not refused
// when the scenario loads (a phase the run never had is absent at the end).
func TestSearchPhaseGatesLoad(t *testing.T) {
	t.Parallel()
	yaml := searchScenario + "gates: {thresholds: [\"phase[search-rate-13].client.ttft.p99 < 1s\", \"search.capacity >= 10\"]}\n"
	if _, _, err := Load(writeScenario(t, yaml), nil); err != nil {
		t.Fatalf("a gate on a probe was refused: %v", err)
	}
	noSearch := strings.Replace(yaml, "search: {over: rate, min: 2, max: 40, tolerance: 5%, max_probes: 8}", "rate: 5", 1)
	noSearch = strings.Replace(noSearch, "  until: decided\n", "", 1)
	if _, _, err := Load(writeScenario(t, noSearch), nil); err == nil || !strings.Contains(err.Error(), `the plan has no phase "search-rate-13"`) {
		t.Errorf("without a search, a gate on an unknown phase: %v, want refused", err)
	}
}
