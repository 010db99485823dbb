package run

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/validity"
)

func TestSeconds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int
		s    float64
		want string
	}{
		{0, 0.5, "–"},
		{1, 0.0123, "12.3 ms"},
		{1, 0.9994, "999.4 ms"},
		{1, 1, "1.00 s"},
		{1, 12.345, "12.35 s"},
	} {
		if got := seconds(tc.n, tc.s); got != tc.want {
			t.Errorf("seconds(%d, %v) = %q, want %q", tc.n, tc.s, got, tc.want)
		}
	}
}

func TestMedian(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{1, 5}, 3},
		{[]float64{1, 2, 9}, 2},
		{[]float64{1, 2, 4, 9}, 3},
	} {
		if got := median(tc.xs); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

// trialSummary is a summary with the headline figures set.
func trialSummary(ttft50, ttft99, rps float64, valid bool) report.Summary {
	var s report.Summary
	s.Schema = "test"
	s.Client.Latency.TTFT = report.Dist{N: 10, P50: ttft50, P99: ttft99}
	s.Client.Throughput.RequestsPerSec = rps
	s.Client.Requests = report.RequestCounts{Sent: 10, OK: 10}
	s.Health.Valid = valid
	if !valid {
		s.Health.States = []validity.State{{Name: "host_delayed", Severity: validity.Invalid}, {Name: "failures", Severity: validity.Warning}}
	}
	return s
}

// TestSpreadAndHeadline: the spread is min, median and max over the
// summarised trials (a trial that never got a summary is left out); a
// latency nobody measured shows as "–"; validity is named by its invalid
// states only.
func TestSpreadAndHeadline(t *testing.T) {
	t.Parallel()
	set := &trialSet{n: 4, side: "B", runs: []Result{
		{Summary: trialSummary(0.030, 0.090, 12, true)},
		{Summary: trialSummary(0.010, 0.300, 10, false)},
		{}, // a trial that failed before its summary
		{Summary: trialSummary(0.020, 0.100, 11, true)},
	}}
	var w bytes.Buffer
	set.printSpread(&w)
	out := w.String()
	for _, want := range []string{
		"B spread over 3 trials:\n",
		"TTFT p50      10.0 ms  20.0 ms  30.0 ms",
		"TTFT p99      90.0 ms  100.0 ms  300.0 ms",
		"ITL p50       –        –        –",
		"requests/s    10.00    11.00    12.00",
		"valid in 2 of 3 trials\n",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("spread lacks %q:\n%s", want, out)
		}
	}
	if h := headline(set.runs[1].Summary); !strings.Contains(h, "TTFT p50 10.0 ms p99 300.0 ms") || !strings.HasSuffix(h, "10 of 10 requests ok · NOT VALID (host_delayed)") {
		t.Errorf("headline %q", h)
	}
	var one bytes.Buffer
	(&trialSet{n: 1, runs: set.runs[:1]}).printSpread(&one)
	if one.Len() != 0 {
		t.Errorf("a spread of one trial: %q", one.String())
	}
	if got := set.label(2); got != "B: trial 2 of 4" {
		t.Errorf("label %q", got)
	}
}
