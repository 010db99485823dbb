package gates

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/report/validity"
)

// runsOf is k runs of one engine whose speed moves from run to run: each
// run's TTFT and ITL are scaled by exp(σ·N(0,1)), the run-to-run noise a
// single run cannot show (host load, engine state), then jittered per
// request as world does.
func runsOf(t testing.TB, seed uint64, k, n int, sigma, slow float64) Side {
	rng := rand.New(rand.NewPCG(seed, 99))
	side := make(Side, k)
	for i := range side {
		f := math.Exp(sigma * rng.NormFloat64())
		if slow > 0 {
			f *= slow
		}
		side[i] = world{seed: seed*1000 + uint64(i), n: n, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond, slow: f}.run(t)
	}
	return side
}

// The hierarchical bootstrap's coverage against a known truth: two sides
// drawn from the same engine (no regression) whose runs differ by 10 %
// (σ of the log scale) while 150 requests a run pin each run's mean to a
// few %. With 8 runs a side the bootstrap over runs, then requests, holds
// the true regression (0) close to its 95 %; resampling requests alone,
// one run a side and no noise floor, it misses most of the time, which is
// why a single run is widened by a floor.
func TestHierarchicalBootstrapCoverage(t *testing.T) {
	t.Parallel()
	const trials = 60
	gs := mustParse(t, "client.ttft.mean regression < 50%")
	o := Options{Bootstrap: Bootstrap{Resamples: 400, Confidence: 0.95, Seed: 3}, Floors: Floors{From: "none", Rest: new(float64)}}
	covered, coveredOne := 0, 0
	for i := range trials {
		a := runsOf(t, uint64(2*i+1), 8, 150, 0.10, 0)
		b := runsOf(t, uint64(2*i+2), 8, 150, 0.10, 0)
		r := gs.EvaluateSides(a, b, o)[0]
		if r.Interval == nil || !strings.Contains(r.Reason, "bootstrap over runs, then requests") {
			t.Fatalf("no hierarchical interval: %+v", r)
		}
		if r.Interval[0] <= 0 && 0 <= r.Interval[1] {
			covered++
		}
		one := gs.EvaluateSides(a[:1], b[:1], o)[0]
		if one.Interval[0] <= 0 && 0 <= one.Interval[1] {
			coveredOne++
		}
	}
	t.Logf("coverage of 0: hierarchical %d/%d, requests alone %d/%d", covered, trials, coveredOne, trials)
	// 8 runs: the percentile bootstrap's interval is narrower than a t
	// interval by about √(7/8) and the t quantile's excess; it still holds
	// the truth in well over 80 % of draws (a binomial 95 % band around
	// 0.88 from 60 draws).
	if covered < trials*80/100 {
		t.Errorf("the hierarchical interval held the true regression %d of %d times", covered, trials)
	}
	if coveredOne > trials*60/100 {
		t.Errorf("resampling requests alone held it %d of %d times: the runs' noise is not what the test assumes", coveredOne, trials)
	}
}

// A 30 % slower engine measured 3 runs a side, with the same run-to-run
// noise: the hierarchical interval lies wholly beyond 10 %.
func TestHierarchicalBootstrapFindsARegression(t *testing.T) {
	t.Parallel()
	base := runsOf(t, 101, 3, 200, 0.03, 0)
	cur := runsOf(t, 102, 3, 200, 0.03, 1.3)
	r := mustParse(t, "client.itl.p50 regression < 10%").EvaluateSides(cur, base, Options{})[0]
	if r.Status != Fail || r.NoiseFloor != 0 || r.Runs != 3 || r.BaselineRuns != 3 {
		t.Errorf("%s: %s (floor %v, runs %d/%d)", r.Gate, r.Reason, r.NoiseFloor, r.Runs, r.BaselineRuns)
	}
}

// The three outcomes of a regression: one run a side with a learned
// floor, a floor from the baseline's history, and the default.
func TestRegressionNoiseFloors(t *testing.T) {
	t.Parallel()
	base := runsOf(t, 201, 1, 400, 0, 0)
	slower := runsOf(t, 202, 1, 400, 0, 1.3)
	same := runsOf(t, 203, 1, 400, 0, 0)
	learned := func(f float64) Options {
		return Options{Floors: Floors{From: "noise.json", ByMetric: map[string]float64{"client.itl.p50": f}}}
	}
	history := runsOf(t, 204, 5, 400, 0.05, 0)
	tests := []struct {
		name      string
		cur, base Side
		o         Options
		status    Status
		reason    string
		toDecide  string
	}{
		{"30% beyond a 5% floor", slower, base, learned(0.05), Fail, "±5.0% noise floor (noise.json)", ""},
		{"30% within a 25% floor", slower, base, learned(0.25), Inconclusive, "not beyond the noise", "3 or more runs a side"},
		{"the same engine within a 5% floor", same, base, learned(0.05), Pass, "wholly within", ""},
		{"the default floor", slower, base, Options{}, Inconclusive, "±20.0% noise floor (the default", "llmbench noise"},
		{"a history's floor", slower, history, Options{}, Fail, "the spread of 5 runs on a side", ""},
	}
	for _, tt := range tests {
		r := mustParse(t, "client.itl.p50 regression < 10%").EvaluateSides(tt.cur, tt.base, tt.o)[0]
		if r.Status != tt.status || !strings.Contains(r.Reason, tt.reason) || !strings.Contains(r.ToDecide, tt.toDecide) {
			t.Errorf("%s: %s %q (to decide %q), want %s with %q", tt.name, r.Status, r.Reason, r.ToDecide, tt.status, tt.reason)
		}
		if tt.status == Inconclusive && r.ToDecide == "" {
			t.Errorf("%s: inconclusive without what would decide it", tt.name)
		}
	}
}

// TestHistoryFloor: a Student's t prediction interval for one more run.
func TestHistoryFloor(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		xs   []float64
		want float64
		ok   bool
	}{
		// mean 10, sd 1, k 4: t(3) = 3.182, × √(1 + 1/4) = 3.558 → 0.3558
		{[]float64{9, 10, 10, 11}, 3.182446 * math.Sqrt(1.25) * math.Sqrt(2.0/3) / 10, true},
		{[]float64{5, 5, 5}, 0, true},
		{[]float64{9, 11}, 0, false}, // two runs: no prediction interval
		{[]float64{0, 0, 0}, 0, false},
	} {
		got, ok := historyFloor(tt.xs)
		if ok != tt.ok || math.Abs(got-tt.want) > 1e-4 {
			t.Errorf("historyFloor(%v) = %v, %v; want %v, %v", tt.xs, got, ok, tt.want, tt.ok)
		}
	}
}

// A run that is not valid decides no gate but those on what made it so:
// every other gate is inconclusive, naming the state, whatever the numbers
// say; and a baseline that is not valid makes its regressions inconclusive.
func TestNotValidIsInconclusive(t *testing.T) {
	t.Parallel()
	ok := world{seed: 31, n: 200, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond}.run(t)
	bad := world{seed: 32, n: 200, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond, slow: 3}.run(t)
	bad.Summary.Health.Valid = false
	bad.Summary.Health.States = []validity.State{{Name: validity.HostDelayed, Severity: validity.Invalid, Says: "the host delayed the client: give llmbench cores of its own"}}
	bad.Summary.Health.Problems = []string{"the host delayed the client"}
	gs := mustParse(t, "client.ttft.p50 < 1ms", "client.ttft.p50 < 10s", "client.itl.p50 regression < 10%",
		"client.requests.failed == 0", "health.valid == true", "client.error_rate < 50%")
	want := []Status{Inconclusive, Inconclusive, Inconclusive, Pass, Fail, Pass}
	for i, r := range gs.EvaluateSides(Side{bad}, Side{ok}, requestLevel) {
		if r.Status != want[i] {
			t.Errorf("%s: %s (%s), want %s", r.Gate, r.Status, r.Reason, want[i])
		}
		if r.Status == Inconclusive && (!strings.Contains(r.Reason, "not valid (host_delayed)") || !strings.Contains(r.ToDecide, "cores of its own")) {
			t.Errorf("%s: reason %q, to decide %q", r.Gate, r.Reason, r.ToDecide)
		}
	}
	r := mustParse(t, "client.itl.p50 regression < 10%").EvaluateSides(Side{ok}, Side{bad}, requestLevel)[0]
	if r.Status != Inconclusive || !strings.Contains(r.Reason, "the baseline is not valid") {
		t.Errorf("against a baseline not valid: %s %q", r.Status, r.Reason)
	}
	// Not valid with nothing named (a hand-made summary): the numbers decide.
	quiet := ok
	quiet.Summary.Health.Valid = false
	if r := mustParse(t, "client.ttft.p50 < 10s").EvaluateSides(Side{quiet}, nil, requestLevel)[0]; r.Status != Pass {
		t.Errorf("a summary not valid for no named reason: %s %q", r.Status, r.Reason)
	}
}

// A host that delayed the client turns a fail into inconclusive, never a
// pass into anything else.
func TestHostDelayMakesAFailInconclusive(t *testing.T) {
	t.Parallel()
	base := world{seed: 41, n: 300, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond}.run(t)
	slow := world{seed: 42, n: 300, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond, slow: 2}.run(t)
	slow.Summary.Health.Client.SchedLatencyP99_s = 0.02
	gs := mustParse(t, "client.itl.p50 regression < 10%", "client.itl.p50 regression < 500%")
	rs := gs.EvaluateSides(Side{slow}, Side{base}, requestLevel)
	if rs[0].Status != Inconclusive || !strings.Contains(rs[0].Reason, "the host delayed it") || !strings.Contains(rs[0].ToDecide, "quieter host") {
		t.Errorf("%s: %s %q", rs[0].Gate, rs[0].Status, rs[0].Reason)
	}
	if rs[1].Status != Pass {
		t.Errorf("%s: %s %q", rs[1].Gate, rs[1].Status, rs[1].Reason)
	}
}

// Absolute gates over a trial set: each run decides, one fail fails, all
// passing pass, anything else is inconclusive.
func TestAbsoluteOverTrials(t *testing.T) {
	t.Parallel()
	fast := world{seed: 51, n: 400, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond}.run(t)
	slow := world{seed: 52, n: 400, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond, slow: 3}.run(t)
	few := world{seed: 53, n: 20, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond}.run(t)
	g := mustParse(t, "client.ttft.p90 < 200ms")
	for _, tt := range []struct {
		name   string
		side   Side
		status Status
		reason string
	}{
		{"all pass", Side{fast, fast}, Pass, "all 2 runs"},
		{"one fails", Side{fast, slow}, Fail, "run 2 of 2"},
		{"one undecided", Side{fast, few}, Inconclusive, "run 2 of 2"},
	} {
		if r := g.EvaluateSides(tt.side, nil, Options{})[0]; r.Status != tt.status || !strings.Contains(r.Reason, tt.reason) {
			t.Errorf("%s: %s %q", tt.name, r.Status, r.Reason)
		}
	}
}

// Absolute gates on one run, three-valued, from the records: the
// order-statistic interval of a quantile, the t interval of a mean, the
// Wilson interval of a fraction, a count exactly.
func TestAbsoluteThreeValued(t *testing.T) {
	t.Parallel()
	r400 := world{seed: 61, n: 400, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond, failed: 4}.run(t)
	r50 := world{seed: 62, n: 50, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond}.run(t)
	p99 := r50.Summary.Client.Latency.TTFT.P99
	for _, tt := range []struct {
		expr   string
		run    Run
		status Status
		reason string
	}{
		{"client.ttft.p99 < 1s", r400, Pass, "order-statistic interval over 396 samples"},
		{"client.ttft.p99 < 50ms", r400, Fail, "wholly beyond"},
		// A p99 from 50 requests has no 95 % upper bound: near its bound,
		// or far above it, it cannot pass.
		{"client.ttft.p99 < " + ms(p99*1.05), r50, Inconclusive, "unbounded straddles"},
		{"client.ttft.p99 < 10s", r50, Inconclusive, "unbounded straddles"},
		{"client.ttft.p99 > 10ms", r50, Pass, ""},
		{"client.ttft.mean < 1s", r400, Pass, "interval of the mean"},
		{"client.error_rate < 5%", r400, Pass, "Wilson"},
		{"client.error_rate < 1.5%", r400, Inconclusive, "Wilson"},
		{"client.requests.failed <= 4", r400, Pass, ""},
	} {
		r := mustParse(t, tt.expr).EvaluateSides(Side{tt.run}, nil, Options{})[0]
		if r.Status != tt.status || !strings.Contains(r.Reason, tt.reason) {
			t.Errorf("%s: %s %q, want %s with %q", tt.expr, r.Status, r.Reason, tt.status, tt.reason)
		}
		if r.Status == Inconclusive && r.ToDecide == "" {
			t.Errorf("%s: inconclusive without what would decide it", tt.expr)
		}
	}
	if n := quantileSampleFloor(0.99); n < 300 || n > 400 {
		t.Errorf("a p99 is bounded from %d samples", n)
	}
}

func ms(s float64) string { return fmt.Sprintf("%.1fms", s*1e3) }
