package run

import "testing"

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
