package run

import (
	"testing"

	"github.com/llmbench-org/llmbench/workload"
)

// A run bounded by a request count publishes it (the live view's progress
// and ETA); one bounded by time does not.
func TestPlannedRequests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		workload string
		want     int
	}{
		{"{concurrency: 2, requests: 40}", 40},
		{"{concurrency: 2, requests: 40, warmup: {requests: 8}}", 48},
		{"{concurrency: 2, duration: 10s}", 0},
		{"{concurrency: 2, duration: 10s, requests: 40}", 0},
	} {
		_, plan, err := Load(writeScenario(t, "name: p\nengine: {kind: sim}\nworkload: "+tc.workload+"\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := plannedRequests(plan); got != tc.want {
			t.Errorf("%s: %d planned requests, want %d", tc.workload, got, tc.want)
		}
	}
}

// Each phase records how many requests its plan offered, for comparisons:
// a request count, or an open loop's every arrival once it ran to its end.
func TestPhasePlanned(t *testing.T) {
	t.Parallel()
	_, plan, err := Load(writeScenario(t, "name: p\nengine: {kind: sim}\nworkload: {rate: 10, arrival: constant, duration: 2s, warmup: {requests: 8, concurrency: 2}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	phases := plan.Phases()
	if len(phases) != 2 {
		t.Fatalf("%d phases, want warmup and main", len(phases))
	}
	for _, tc := range []struct {
		phase     string
		sent      int
		dropped   int
		completed bool
		want      int
	}{
		{phases[0].Name, 8, 0, true, 8},   // a request count
		{phases[1].Name, 17, 3, true, 20}, // every arrival, sent or dropped
		{phases[1].Name, 12, 0, false, 0}, // cut short: what was planned is unknown
		{"nope", 5, 0, true, 0},
	} {
		res := workload.PhaseResult{Name: tc.phase, Sent: tc.sent, Dropped: tc.dropped}
		if got := phasePlanned(plan, res, tc.completed); got != tc.want {
			t.Errorf("%s (sent %d, dropped %d, completed %v): planned %d, want %d", tc.phase, tc.sent, tc.dropped, tc.completed, got, tc.want)
		}
	}
}
