package validity

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/selfmon"
)

func ptr[T any](v T) *T { return &v }

// Judge names each state from its figures, at its bound, with its severity
// and which requests the latencies cover.
func TestJudge(t *testing.T) {
	t.Parallel()
	type want struct {
		name     string
		severity Severity
		figure   float64
		has      []string // in Says or Covers
	}
	for _, tt := range []struct {
		case_ string
		in    Input
		want  []want
	}{
		{"a clean run", Input{Sent: 200}, nil},
		{"39% failed: not valid, survivors named", Input{Sent: 1000, Failed: 390},
			[]want{{FailuresOverBound, Invalid, 0.39, []string{"39% of requests failed (390 of 1000), above the 1% bound", "latencies cover the 61% of requests that succeeded (610 of 1000); the 390 that failed are in no latency figure"}}}},
		{"1 in 100 failed: at the default bound, a warning", Input{Sent: 100, Failed: 1},
			[]want{{FailuresWithinBound, Warning, 0.01, []string{"1% of requests failed (1 of 100), within the 1% bound", "the 1 that failed is in no latency figure"}}}},
		{"2 in 100 failed: past the default bound", Input{Sent: 100, Failed: 2},
			[]want{{FailuresOverBound, Invalid, 0.02, []string{"above the 1% bound"}}}},
		{"failures declared expected, within", Input{Sent: 100, Failed: 4, MaxFailureRate: 0.05},
			[]want{{FailuresWithinBound, Warning, 0.04, []string{"within the 5% bound", "the 96% of requests that succeeded (96 of 100)"}}}},
		{"failures declared expected, beyond", Input{Sent: 100, Failed: 6, MaxFailureRate: 0.05},
			[]want{{FailuresOverBound, Invalid, 0.06, []string{"above the 5% bound"}}}},
		{"canceled requests are not counted", Input{Sent: 110, Failed: 1, Canceled: 10},
			[]want{{FailuresWithinBound, Warning, 0.01, []string{"(1 of 100)"}}}},
		{"every request canceled", Input{Sent: 10, Failed: 0, Canceled: 10}, nil},
		{"throttled", Input{Sent: 10, Client: rundir.ClientHealth{Delay: selfmon.DelayThrottled, Throttled_s: 0.25, ThrottledPeriods: 3, CPUQuota: ptr(0.2)}},
			[]want{{ClientThrottled, Invalid, 0.25, []string{"CPU limit of llmbench's container (0.2 cores) stopped the client 3 times, 250 ms", "each including the client's own delay"}}}},
		{"saturated", Input{Sent: 10, Client: rundir.ClientHealth{Delay: selfmon.DelayCPUBound, Saturated: true, CPUUtilization: 0.97, CPUCores: 2}},
			[]want{{ClientSaturated, Invalid, 0.97, []string{"saturated (97% of 2 cores)"}}}},
		{"host delayed, other processes measured", Input{Sent: 10, Client: rundir.ClientHealth{Delay: selfmon.DelayHost, SchedLatencyP99_s: 0.004, HostOtherCPU: ptr(0.8)}},
			[]want{{HostDelayed, Invalid, 0.004, []string{"other processes used 80% of the machine"}}}},
		{"host delayed, scheduler only", Input{Sent: 10, Client: rundir.ClientHealth{Delay: selfmon.DelayHost, SchedLatencyP99_s: 0.012}},
			[]want{{HostDelayed, Invalid, 0.012, []string{"waited 12.0 ms (p99)"}}}},
		{"an engine restart", Input{Sent: 10, Restarts: 3, FirstRestart: 4500 * time.Millisecond},
			[]want{{EngineRestarted, Invalid, 3, []string{"went back to zero 3 times, first 4.5 s into the run", "either side of the restart"}}}},
		{"dropped arrivals", Input{Sent: 12, DroppedArrivals: 18},
			[]want{{ArrivalsDropped, Invalid, 18, []string{"18 arrivals were dropped: the offered load was not sent", "the 12 requests sent"}}}},
		{"the rate held", Input{Sent: 100, Rates: []PhaseRate{{Phase: "main", Requests: 100, Planned: 10, Achieved: 9.6}}}, nil},
		{"the rate fell short", Input{Sent: 100, Rates: []PhaseRate{{Phase: "ok", Requests: 50, Planned: 10, Achieved: 10}, {Phase: "fast", Requests: 50, Planned: 100, Achieved: 80}}},
			[]want{{RateShort, Invalid, 0.8, []string{"phase fast sent 80 requests/s of the 100 planned (80%, below 95%)", "its 50 requests at the rate achieved"}}}},
		{"late arrivals: a warning", Input{Sent: 100, LateArrivals: 7, LateP99: 30 * time.Millisecond},
			[]want{{ArrivalsLate, Warning, 7, []string{"7 arrivals were sent later than planned (schedule lag p99 30 ms)"}}}},
		{"lengths short when asked: a warning", Input{Sent: 10, ShortRequests: 4, LengthsOf: 10, MissingFraction: 0.125, LengthsAsked: true},
			[]want{{LengthsShort, Warning, 0.125, []string{"4 of 10 requests stopped before their max_tokens, 12.5%", "4 of them shorter than planned"}}}},
		{"lengths short when not asked: the model's choice", Input{Sent: 10, ShortRequests: 4, LengthsOf: 10, MissingFraction: 0.125}, nil},
		{"stopped, torn, duplicated, unfinished", Input{Sent: 5, Stopped: "interrupted", PartialLines: 1, Duplicates: 2, Unfinished: true, Records: 7},
			[]want{
				{StoppedEarly, Invalid, 1, []string{"the run stopped early: interrupted"}},
				{TornLines, Invalid, 1, []string{"1 torn JSONL line was skipped"}},
				{DuplicateRecords, Invalid, 2, []string{"2 records repeated an ID already seen"}},
				{Unfinished, Invalid, 1, []string{"the run did not finish", "7 records were read"}},
			}},
		{"several at once, in the order of Names", Input{Sent: 100, Failed: 50, Restarts: 1, Client: rundir.ClientHealth{Saturated: true, CPUUtilization: 0.95, CPUCores: 1}, LateArrivals: 1},
			[]want{{FailuresOverBound, Invalid, 0.5, nil}, {ClientSaturated, Invalid, 0.95, nil}, {EngineRestarted, Invalid, 1, nil}, {ArrivalsLate, Warning, 1, nil}}},
	} {
		t.Run(tt.case_, func(t *testing.T) {
			t.Parallel()
			got := Judge(tt.in)
			if len(got) != len(tt.want) {
				t.Fatalf("states %+v, want %d", got, len(tt.want))
			}
			invalid := false
			for i, w := range tt.want {
				g := got[i]
				if g.Name != w.name || g.Severity != w.severity || g.Figure != w.figure {
					t.Errorf("state %d: %s %s figure %g, want %s %s figure %g", i, g.Name, g.Severity, g.Figure, w.name, w.severity, w.figure)
				}
				if g.Says == "" || g.Covers == "" || !strings.HasPrefix(g.Covers, "latencies cover ") || g.Unit == "" {
					t.Errorf("state %s lacks words, coverage or a unit: %+v", g.Name, g)
				}
				for _, h := range w.has {
					if !strings.Contains(g.Says+" | "+g.Covers, h) {
						t.Errorf("state %s: %q | %q lacks %q", g.Name, g.Says, g.Covers, h)
					}
				}
				if !slices.Contains(Names, g.Name) {
					t.Errorf("state %s is not in Names", g.Name)
				}
				invalid = invalid || w.severity == Invalid
			}
			if Valid(got) == invalid {
				t.Errorf("Valid %v with states %+v", Valid(got), got)
			}
			if n := len(Problems(got)); (n > 0) != invalid {
				t.Errorf("%d problems, invalid %v", n, invalid)
			}
		})
	}
}

// The bound a state quotes is the one that decided it: selfmon's for the
// client, the scenario's (or the default) for failures, MinRateAchieved for
// rates (an at-least bound).
func TestJudgeQuotesItsBound(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in      Input
		bound   float64
		atLeast bool
	}{
		{Input{Sent: 10, Failed: 5}, DefaultMaxFailureRate, false},
		{Input{Sent: 10, Failed: 5, MaxFailureRate: 0.3}, 0.3, false},
		{Input{Sent: 10, Client: rundir.ClientHealth{Saturated: true}}, selfmon.CPUBound, false},
		{Input{Sent: 10, Client: rundir.ClientHealth{Delay: selfmon.DelayHost}}, selfmon.LateScheduler.Seconds(), false},
		{Input{Sent: 10, Client: rundir.ClientHealth{Delay: selfmon.DelayThrottled}}, selfmon.ThrottledTolerance.Seconds(), false},
		{Input{Sent: 10, Rates: []PhaseRate{{Phase: "p", Requests: 10, Planned: 10, Achieved: 1}}}, MinRateAchieved, true},
	} {
		got := Judge(tt.in)
		if len(got) != 1 || got[0].Bound != tt.bound || got[0].AtLeast != tt.atLeast {
			t.Errorf("%+v: states %+v, want one with bound %g (at least %v)", tt.in, got, tt.bound, tt.atLeast)
		}
	}
}
