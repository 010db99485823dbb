package report

import (
	"strings"
	"testing"
)

// Points in different load units are shown but not ordered together.
func TestSweepOfMixedUnits(t *testing.T) {
	t.Parallel()
	phase := func(name string, load float64, unit string, rps, ttft float64) PhaseResult {
		return PhaseResult{Name: name, Measured: true, Duration: 10, Load: load, LoadUnit: unit,
			Client: ClientSide{Throughput: Throughput{RequestsPerSec: rps}, Latency: Latencies{TTFT: Dist{P50: ttft}}}}
	}
	sw := sweepOf([]PhaseResult{
		phase("baseline", 1, "users", 4, 0.004),
		phase("probe", 64, "users", 28, 2.0),
		phase("auto-1", 10, "requests/s", 10, 0.004),
		phase("auto-2", 20, "requests/s", 20, 0.005),
		phase("auto-3", 30, "requests/s", 21, 0.9),
		phase("auto-4", 40, "requests/s", 21, 3.0),
	})
	if sw == nil || len(sw.Points) != 6 {
		t.Fatalf("sweep %+v, want all 6 points shown", sw)
	}
	if !sw.Saturation.Found || sw.Saturation.Phase != "auto-2" {
		t.Errorf("saturation %+v, want the knee at auto-2 among the open-loop points", sw.Saturation)
	}
	if !strings.Contains(sw.Saturation.Reason, "not baseline, probe") {
		t.Errorf("reason %q does not say the closed-loop points were left out", sw.Saturation.Reason)
	}
}

// With an slo, the sweep names the point of peak goodput; without, none.
func TestSweepGoodputPeak(t *testing.T) {
	t.Parallel()
	phase := func(name string, load, rps, good float64, withSLO bool) PhaseResult {
		ph := PhaseResult{Name: name, Measured: true, Duration: 10, Load: load, LoadUnit: "requests/s",
			Client: ClientSide{Throughput: Throughput{RequestsPerSec: rps}}}
		if withSLO {
			ph.Client.Goodput = &Goodput{RequestsPerS: good}
		}
		return ph
	}
	for _, withSLO := range []bool{true, false} {
		sw := sweepOf([]PhaseResult{
			phase("rate-4", 4, 4, 4, withSLO), phase("rate-8", 8, 8, 7.5, withSLO),
			phase("rate-12", 12, 11, 6, withSLO), phase("rate-16", 16, 11.5, 1, withSLO),
		})
		switch g := sw.GoodputPeak; {
		case !withSLO && g != nil:
			t.Errorf("a sweep without an slo has a goodput peak %+v", g)
		case withSLO && (g == nil || g.Phase != "rate-8" || g.RequestsPerS != 7.5):
			t.Errorf("goodput peak %+v, want rate-8 at 7.5/s", g)
		case withSLO && !strings.Contains(g.String(), "goodput peaks at rate-8 (offered 8 requests/s): 7.50 requests/s"):
			t.Errorf("in words: %s", g)
		}
	}
}
