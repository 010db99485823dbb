package gates

import (
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// twoPhases is a sweep-like run: phase "low" of fast requests, then phase
// "high" whose requests are slow× slower.
func twoPhases(t *testing.T, seed uint64, slow float64) Run {
	t.Helper()
	low := world{seed: seed, n: 150, ttft: 50 * time.Millisecond, itl: 5 * time.Millisecond}.records()
	high := world{seed: seed + 100, n: 150, ttft: 50 * time.Millisecond, itl: 5 * time.Millisecond, slow: slow}.records()
	shift := low[len(low)-1].End
	var recs []client.Record
	recs = append(recs, low...)
	for _, r := range high {
		r.Phase, r.Index = "high", r.Index+len(low)
		r.Sent, r.Wrote, r.FirstByte, r.FirstToken, r.End = r.Sent+shift, r.Wrote+shift, r.FirstByte+shift, r.FirstToken+shift, r.End+shift
		for i := range r.Chunks {
			r.Chunks[i].At += shift
		}
		recs = append(recs, r)
	}
	for i := range low {
		recs[i].Phase = "low"
	}
	meta := rundir.RunMeta{ID: "two-phases", Scenario: "sweep", Phases: []rundir.PhaseMeta{
		{Name: "low", Measured: true, Start: time.Second, End: shift},
		{Name: "high", Measured: true, Start: shift, End: recs[len(recs)-1].End},
	}}
	s := report.Compute(meta, append([]client.Record(nil), recs...), nil, nil, 0)
	return NewRun(s, recs)
}

// TestPhaseGates checks phase[NAME].<metric>: it reads that phase alone, for
// thresholds and for regressions whose bootstrap resamples that phase's
// requests only.
func TestPhaseGates(t *testing.T) {
	base := twoPhases(t, 1, 3)
	cur := twoPhases(t, 2, 6) // "high" twice as slow as in base; "low" alike
	lowP99 := base.Summary.Phases[0].Client.Latency.TTFT.P99
	highP99 := base.Summary.Phases[1].Client.Latency.TTFT.P99
	if !(lowP99 < 0.1 && highP99 > 0.12) {
		t.Fatalf("the world is not what the test assumes: TTFT p99 low %v, high %v", lowP99, highP99)
	}
	tests := []struct {
		expr   string
		run    Run
		status Status
		reason string
	}{
		// 150 requests a phase bound a p90, not a p99 (docs/decisions/0034).
		{"phase[low].client.ttft.p90 < 100ms", base, Pass, ""},
		{"phase[high].client.ttft.p90 < 100ms", base, Fail, "is not <"},
		{"phase[low].client.ttft.p99 < 100ms", base, Inconclusive, "straddles"},
		{"phase[high].client.requests.ok == 150", base, Pass, ""},
		{"phase[nope].client.ttft.p99 < 1s", base, Error, `no phase "nope" (its phases: low, high)`},
		{"phase[high].server.ttft.p99 < 1s", base, Error, "no /metrics view"},
		{"phase[low].client.ttft.p50 regression < 20%", cur, Pass, "95% CI"},
		{"phase[high].client.ttft.p99 regression < 20%", cur, Fail, "wholly beyond"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			rs := mustParse(t, tt.expr).EvaluateSides(Side{tt.run}, Side{base}, requestLevel)
			if rs[0].Status != tt.status || !strings.Contains(rs[0].Reason, tt.reason) {
				t.Errorf("%s: %s (%s), want %s containing %q", tt.expr, rs[0].Status, rs[0].Reason, tt.status, tt.reason)
			}
		})
	}
}

func TestPhaseGateSyntax(t *testing.T) {
	for _, tt := range []struct {
		expr, metric, err string
	}{
		{expr: "phase[rate-8].client.ttft.p99 < 1s", metric: "phase[rate-8].client.ttft.p99"},
		{expr: "phase[rate-2.5].client.goodput.fraction >= 90%", metric: "phase[rate-2.5].client.goodput.fraction"},
		{expr: "phase[main].health.valid == true", err: "unknown metric"},
		{expr: "phase[main].client.ttft.p999 < 1s", err: "did you mean phase[main].client.ttft.p99?"},
		{expr: "phase[].client.ttft.p99 < 1s", err: "unknown metric"},
		{expr: "phase[main]client.ttft.p99 < 1s", err: "unknown metric"},
	} {
		g, err := Parse(tt.expr)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.expr, err, tt.err)
			}
			continue
		}
		if err != nil || g.Metric != tt.metric {
			t.Errorf("%q: metric %q, error %v; want %q", tt.expr, g.Metric, err, tt.metric)
		}
	}
}
