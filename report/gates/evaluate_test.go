package gates

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/reconcile"
)

// summaries used by the table: a healthy run, the same run 30 % slower with
// failures, and a run with a server view whose p99 lies above the top bucket.
func evalSummaries(t *testing.T) (fast, slow, server report.Summary) {
	fast = world{seed: 1, n: 200, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond}.run(t).Summary
	// Its 2 % failures are declared expected (a run that injects them):
	// valid, with a warning.
	slow = world{seed: 2, n: 200, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond, slow: 1.3, failed: 4, open: true, maxFailureRate: 0.05}.run(t).Summary
	slow.Findings = []report.Finding{{ID: reconcile.IDForeignTraffic, Severity: reconcile.Warn}, {ID: reconcile.IDServerView, Severity: reconcile.Info}}
	server = fast
	server.Server = &report.ServerSide{Latency: map[string]report.ServerDist{
		"ttft": {N: 200, Mean: 0.5,
			P50:       report.BucketEstimate{Value: 0.4, Bucket: [2]float64{0.25, 0.5}},
			P99:       report.BucketEstimate{Value: 1, Bucket: [2]float64{1, 1}, AboveTop: true},
			Quantiles: map[string]report.BucketEstimate{"p75": {Value: 0.6, Bucket: [2]float64{0.5, 1}}}},
	}}
	server.Client.Goodput = &report.Goodput{Good: 190, Fraction: 0.95, RequestsPerS: 19}
	return fast, slow, server
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	fast, slow, server := evalSummaries(t)
	p99, p90 := fast.Client.Latency.TTFT.P99, fast.Client.Latency.TTFT.P90
	mean, slowMean := fast.Client.Latency.TTFT.Mean, slow.Client.Latency.TTFT.Mean
	if p99 < 0.1 || p99 > 0.3 {
		t.Fatalf("synthetic TTFT p99 %v: the world is not what the table assumes", p99)
	}
	tests := []struct {
		name   string
		expr   string
		s      report.Summary
		base   *report.Summary
		status Status
		value  float64 // the metric in the run; NaN: not checked
		limit  float64 // NaN: not checked
		reason string  // a substring of the reason
	}{
		// A summary alone decides a quantile by its value only where its
		// sample bounds the rank: 200 samples bound a p90, not a p99
		// (three-valued gates, docs/decisions/0034).
		{"literal passes", "client.ttft.p90 < 500ms", fast, nil, Pass, p90, 0.5, "< 500ms (the summary alone, no interval"},
		{"literal fails", fmt.Sprintf("client.ttft.p90 < %gms", math.Floor(p90*1e3)), fast, nil, Fail, p90, math.Floor(p90*1e3) / 1e3, "is not <"},
		{"a p99 of 200 is inconclusive", "client.ttft.p99 < 500ms", fast, nil, Inconclusive, p99, 0.5, "200 samples are too few to bound a p99"},
		{"boundary <= passes", fmt.Sprintf("client.ttft.max <= %gs", fast.Client.Latency.TTFT.Max), fast, nil, Pass, fast.Client.Latency.TTFT.Max, fast.Client.Latency.TTFT.Max, ""},
		{"no failures", "client.requests.failed == 0", fast, nil, Pass, 0, 0, "0 == 0"},
		{"failures", "client.requests.failed == 0", slow, nil, Fail, 4, 0, "4 is not == 0"},
		{"error class", "client.errors.http_status <= 3", slow, nil, Fail, 4, 3, ""},
		// 4 failed of 200: the Wilson interval is 0.78 % … 5.03 %.
		{"error rate in percent", "client.error_rate < 0.5%", slow, nil, Fail, 0.02, 0.005, "2.00% is not < 0.5%"},
		{"error rate plain", "client.error_rate <= 0.06", slow, nil, Pass, 0.02, 0.06, ""},
		{"error rate near its bound", "client.error_rate < 1%", slow, nil, Inconclusive, 0.02, 0.01, "Wilson 95% interval over 200 requests 0.78% … 5.03% straddles"},
		{"throughput", "client.throughput.output_tokens_per_s > 100", fast, nil, Pass, fast.Client.Throughput.OutputTokensPerSec, 100, ""},
		{"itl", "client.itl.p50 < 10ms", fast, nil, Pass, fast.Client.Latency.ITL.P50, 0.01, ""},
		{"tpot in us", "client.tpot.p90 < 1000us", fast, nil, Fail, fast.Client.Latency.TPOT.P90, 0.001, ""},
		{"e2e mean", "client.e2e.mean < 1s", fast, nil, Pass, fast.Client.Latency.E2E.Mean, 1, ""},
		{"health valid", "health.valid == true", fast, nil, Pass, 1, 1, "true == true"},
		{"goodput fraction", "client.goodput.fraction >= 99%", server, nil, Fail, 0.95, 0.99, "95.00% is not >= 99%"},
		{"goodput rate", "client.goodput.requests_per_s > 10", server, nil, Pass, 19, 10, ""},
		{"goodput without an slo", "client.goodput.fraction >= 99%", fast, nil, Error, 0, 0, "sets no slo"},
		{"findings warn", "findings.warn == 0", slow, nil, Fail, 1, 0, ""},
		{"findings info not counted as warn", "findings.warn == 0", fast, nil, Pass, 0, 0, ""},
		{"schedule lag of an open loop", "health.schedule_lag.p90 < 10ms", slow, nil, Pass, slow.Health.ScheduleLag.P90, 0.01, ""},
		{"schedule lag of a closed loop is absent", "health.schedule_lag.p99 < 10ms", fast, nil, Error, 0, 0, "no open-loop request"},
		{"no server view", "server.ttft.p99 < 500ms", fast, nil, Error, 0, 0, "no /metrics view"},
		{"histogram missing", "server.itl.p99 < 500ms", server, nil, Error, 0, 0, "no itl histogram"},
		{"server quantile in its bucket", "server.ttft.p50 <= 500ms", server, nil, Pass, 0.4, 0.5, "bucket 250.0ms–500.0ms"},
		{"server bucket straddles", "server.ttft.p50 < 300ms", server, nil, Inconclusive, 0.4, 0.3, "bucket 250.0ms–500.0ms straddles"},
		{"above the top bucket fails a lower limit", "server.ttft.p99 < 500ms", server, nil, Fail, 1, 0.5, "above the top bucket"},
		{"above the top bucket cannot pass a higher limit", "server.ttft.p99 < 2s", server, nil, Inconclusive, 1, NaN(), "cannot be decided"},
		{"above the top bucket passes a lower bound", "server.ttft.p99 > 800ms", server, nil, Pass, 1, 0.8, ""},
		{"server at a configured percentile", "server.ttft.p75 < 500ms", server, nil, Fail, 0.6, 0.5, "bucket 500.0ms–1000.0ms"},
		{"server percentile the run did not report", "server.ttft.p99.9 < 1s", server, nil, Error, 0, 0, "not among the run's report.percentiles"},
		{"server percentile in a phase", "phase[nope].server.ttft.p75 < 1s", server, nil, Error, 0, 0, "no phase"},
		// Summaries alone, one run a side: a baseline form is widened by
		// the default noise floor (±20 % of the baseline for a mean, ±100 %
		// for a p99), so only a change beyond it decides.
		{"baseline factor passes", "client.ttft.mean < baseline * 1.6", slow, &fast, Pass, slowMean, 1.6 * mean, "× 1.6"},
		{"baseline factor fails", "client.ttft.mean < baseline * 105%", slow, &fast, Fail, slowMean, 1.05 * mean, "× 105%"},
		{"baseline factor within the noise", "client.ttft.p99 < baseline * 110%", slow, &fast, Inconclusive, slow.Client.Latency.TTFT.P99, 1.1 * p99, "noise floor"},
		{"baseline plus", "client.requests.failed <= baseline + 2", slow, &fast, Fail, 4, 2, "+ 2"},
		{"baseline minus", "client.throughput.requests_per_s >= baseline - 50", fast, &fast, Pass, fast.Client.Throughput.RequestsPerSec, fast.Client.Throughput.RequestsPerSec - 50, ""},
		{"baseline minus within the noise", "client.throughput.requests_per_s >= baseline - 1", fast, &fast, Inconclusive, fast.Client.Throughput.RequestsPerSec, fast.Client.Throughput.RequestsPerSec - 1, "noise floor"},
		{"baseline as is", "health.valid == baseline", slow, &fast, Pass, 1, 1, ""},
		{"regression point estimate fails", "client.ttft.mean regression < 5%", slow, &fast, Fail, slowMean, 0.05, "point estimate"},
		{"regression point estimate passes", "client.ttft.mean regression < 60%", slow, &fast, Pass, slowMean, 0.6, "point estimate"},
		{"regression within the noise floor", "client.ttft.p99 regression < 10%", slow, &fast, Inconclusive, slow.Client.Latency.TTFT.P99, 0.1, "±100.0% noise floor (the default"},
		{"improvement is no regression", "client.ttft.mean regression < 1%", fast, &slow, Pass, mean, 0.01, ""},
		{"throughput regression is a drop", "client.requests.ok regression < 1%", slow, &fast, Fail, 196, 0.01, "+2.0% (baseline 200 → 196): beyond < +1.0%"},
		{"regression from zero", "client.requests.failed regression < 10%", slow, &fast, Fail, 4, 0.1, "+∞%"},
		{"zero to zero", "client.requests.failed regression < 10%", fast, &fast, Pass, 0, 0.1, "+0.0%"},
		{"no baseline", "client.ttft.p99 < baseline", fast, nil, Error, p99, NaN(), "--baseline"},
		{"absent from the baseline", "server.ttft.p50 < baseline", server, &fast, Error, 0.4, NaN(), "absent from the baseline"},
		{"baseline above its top bucket", "server.ttft.p99 regression < 10%", server, &server, Error, 1, NaN(), "unknowable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rs := mustParse(t, tt.expr).Evaluate(tt.s, tt.base)
			if len(rs) != 1 {
				t.Fatalf("%d results for one gate", len(rs))
			}
			r := rs[0]
			if r.Status != tt.status || !strings.Contains(r.Reason, tt.reason) {
				t.Errorf("%s: %s %q, want %s with %q", tt.expr, r.Status, r.Reason, tt.status, tt.reason)
			}
			if r.Gate != tt.expr || r.Metric != strings.Fields(tt.expr)[0] {
				t.Errorf("result names %q / %q", r.Gate, r.Metric)
			}
			if tt.status != Error && !close(r.Value, tt.value) {
				t.Errorf("value %v, want %v", r.Value, tt.value)
			}
			if !math.IsNaN(tt.limit) && tt.status != Error && !close(r.Limit, tt.limit) {
				t.Errorf("limit %v, want %v", r.Limit, tt.limit)
			}
			if strings.Contains(r.Reason, "\n") {
				t.Errorf("reason spans lines: %q", r.Reason)
			}
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("result does not encode: %v", err)
			}
		})
	}
}

func NaN() float64 { return math.NaN() }

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestEvaluateKeepsOrderAndCountsVerdicts(t *testing.T) {
	t.Parallel()
	fast, slow, _ := evalSummaries(t)
	gs := mustParse(t, "client.requests.failed == 0", "client.ttft.p90 < 10s", "server.ttft.p99 < 1s")
	rs := gs.Evaluate(slow, &fast)
	var got []Status
	for i, r := range rs {
		got = append(got, r.Status)
		if r.Gate != gs[i].Expr {
			t.Errorf("result %d is for %q, want %q", i, r.Gate, gs[i].Expr)
		}
	}
	if fmt.Sprint(got) != "[fail pass error]" {
		t.Errorf("statuses %v", got)
	}
	rep := NewReport(Run{Summary: slow}, &Run{ID: "base"}, rs)
	if p, f, e := rep.Counts(); p != 1 || f != 1 || e != 1 || rep.Passed() || rep.Baseline != "base" {
		t.Errorf("report counts %d/%d/%d passed=%v baseline=%q", p, f, e, rep.Passed(), rep.Baseline)
	}
	if !Passed(nil) {
		t.Error("no gates must pass")
	}
}
