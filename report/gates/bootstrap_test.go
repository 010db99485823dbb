package gates

import (
	"github.com/llmbench-org/llmbench/report/chunkdigest"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"
)

var (
	baseWorld = world{seed: 11, n: 400, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond, open: true, failed: 3}
	// The same engine measured again (other random draws), and 30 % slower.
	againWorld  = world{seed: 12, n: 400, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond, open: true, failed: 3}
	slowerWorld = world{seed: 13, n: 400, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond, open: true, failed: 3, slow: 1.3}
)

// requestLevel decides with the bootstrap over requests alone: a synthetic
// world has no run-to-run noise, so its noise floor is 0.
var requestLevel = Options{Bootstrap: DefaultBootstrap, Floors: Floors{From: "a synthetic world", Rest: new(float64)}}

func TestBootstrapFailsAPlantedRegression(t *testing.T) {
	t.Parallel()
	base, cur := baseWorld.run(t), slowerWorld.run(t)
	for _, expr := range []string{
		"client.ttft.p99 regression < 10%", "client.ttft.p50 regression < 10%", "client.ttft.mean regression <= 10%",
		"client.itl.p90 regression < 10%", "client.e2e.p95 regression < 10%", "client.tpot.p50 regression < 10%",
	} {
		t.Run(expr, func(t *testing.T) {
			t.Parallel()
			r := mustParse(t, expr).EvaluateSides(Side{cur}, Side{base}, requestLevel)[0]
			if r.Status != Fail {
				t.Fatalf("a 30%% regression passed: %s", r.Reason)
			}
			if r.Interval == nil || r.Interval[0] <= 0.10 || r.Interval[0] > r.Observed || r.Observed > r.Interval[1] {
				t.Errorf("interval %v around regression %v, want it wholly above 10%% and around the point", r.Interval, r.Observed)
			}
			if r.Confidence != 0.95 || !strings.Contains(r.Reason, "95% CI") || !strings.Contains(r.Reason, "wholly beyond") {
				t.Errorf("reason %q, confidence %v", r.Reason, r.Confidence)
			}
		})
	}
}

func TestBootstrapPassesTheSameEngine(t *testing.T) {
	t.Parallel()
	base, again := baseWorld.run(t), againWorld.run(t)
	// 400 requests give a p99's regression an interval of about ±14 %.
	gs := mustParse(t, "client.ttft.p99 regression < 20%", "client.ttft.p50 regression < 5%", "client.itl.p99 regression < 10%",
		"client.e2e.mean regression < 5%", "health.schedule_lag.p90 regression < 50%")
	for _, pair := range []struct {
		name      string
		cur, base Run
	}{{"identical runs", base, base}, {"a rerun", again, base}} {
		for _, r := range gs.EvaluateSides(Side{pair.cur}, Side{pair.base}, requestLevel) {
			if r.Status != Pass || r.Interval == nil {
				t.Errorf("%s: %s: %s %q", pair.name, r.Gate, r.Status, r.Reason)
				continue
			}
			if pair.name == "identical runs" && (r.Observed != 0 || r.Interval[0] > 0 || r.Interval[1] < 0) {
				t.Errorf("%s: %s: regression %v, interval %v: want 0 inside it", pair.name, r.Gate, r.Observed, r.Interval)
			}
		}
	}
}

// A small regression measured on few requests: the point estimate is beyond
// the allowed 10 %, but the interval says it could be noise, so the gate
// with records passes where the point-estimate gate fails.
func TestBootstrapNeedsConfidence(t *testing.T) {
	t.Parallel()
	base := world{seed: 21, n: 60, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond}.run(t)
	cur := world{seed: 22, n: 60, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond, slow: 1.2}.run(t)
	gs := mustParse(t, "client.ttft.p90 regression < 10%")
	point := gs.EvaluateSides(Side{{Summary: cur.Summary}}, Side{{Summary: base.Summary}}, requestLevel)[0]
	if point.Observed <= 0.10 || point.Status != Fail {
		t.Fatalf("the setup needs a point regression beyond 10%%: %v %s", point.Observed, point.Reason)
	}
	// Straddling the limit was a pass before gates were three-valued; it
	// is inconclusive now (docs/decisions/0034).
	r := gs.EvaluateSides(Side{cur}, Side{base}, requestLevel)[0]
	if r.Status != Inconclusive || r.Interval == nil || r.Interval[0] >= 0.10 || r.Interval[1] <= 0.10 {
		t.Fatalf("with 60 requests a side the interval must straddle 10%%: %s %v %q", r.Status, r.Interval, r.Reason)
	}
	if r.Observed != point.Observed || !strings.Contains(r.Reason, "not beyond the noise") || !strings.Contains(r.ToDecide, "more requests") {
		t.Errorf("observed %v (point %v), reason %q", r.Observed, point.Observed, r.Reason)
	}
}

func TestBootstrapIsDeterministic(t *testing.T) {
	t.Parallel()
	base, cur := baseWorld.run(t), againWorld.run(t)
	gs := mustParse(t, "client.ttft.p99 regression < 10%", "client.itl.p50 regression < 10%")
	a := gs.EvaluateRuns(cur, &base, DefaultBootstrap)
	b := gs.EvaluateRuns(cur, &base, DefaultBootstrap)
	other := DefaultBootstrap
	other.Seed = 99
	c := gs.EvaluateRuns(cur, &base, other)
	for i := range a {
		if *a[i].Interval != *b[i].Interval || a[i].Reason != b[i].Reason {
			t.Errorf("%s: %v then %v with the same seed", a[i].Gate, *a[i].Interval, *b[i].Interval)
		}
		if *a[i].Interval == *c[i].Interval {
			t.Errorf("%s: seed 99 gave the same interval %v: the seed is not used", a[i].Gate, *a[i].Interval)
		}
	}
}

func TestBootstrapFallsBackWithoutRecords(t *testing.T) {
	t.Parallel()
	base, cur := baseWorld.run(t), slowerWorld.run(t)
	tests := []struct {
		expr      string
		cur, base Run
		why       string
	}{
		{"client.ttft.p99 regression < 10%", Run{Summary: cur.Summary}, base, "no raw records of both runs"},
		{"client.ttft.max regression < 10%", cur, base, "no raw samples behind client.ttft.max"},
		{"client.throughput.output_tokens_per_s regression < 10%", cur, base, "no raw samples"},
		{"client.ttft.p99 regression < 10%", Run{Summary: cur.Summary, Records: cur.Records[:1]}, base, "too few requests"},
	}
	for _, tt := range tests {
		r := mustParse(t, tt.expr).EvaluateSides(Side{tt.cur}, Side{tt.base}, requestLevel)[0]
		if r.Interval != nil || !strings.Contains(r.Reason, "point estimate ("+tt.why) {
			t.Errorf("%s: interval %v, reason %q, want a point estimate because %q", tt.expr, r.Interval, r.Reason, tt.why)
		}
	}
}

// The samples behind each bootstrappable metric are exactly the ones the
// summary was computed from: with every request counted once, the statistic
// equals the summary's value.
func TestSamplesMatchTheSummary(t *testing.T) {
	t.Parallel()
	run := baseWorld.run(t)
	checked := 0
	for name, m := range vocabulary {
		if !m.bootstrappable() {
			continue
		}
		want := m.read(&run.Summary)
		s := samplesOf(run.Records, m.family)
		if want.absent != "" {
			if len(s.values) != 0 {
				t.Errorf("%s: absent from the summary (%s) but %d samples", name, want.absent, len(s.values))
			}
			continue
		}
		ones := make([]int, len(s.sizes))
		for i := range ones {
			ones[i] = 1
		}
		got := s.statistic(m.p, m.stat == "mean", ones)
		if m.family == itlSamples && m.stat != "mean" {
			// The summary's ITL quantiles come from a sketch
			// (chunkdigest.Sketch): within its stated relative error.
			if math.Abs(got-want.v) > chunkdigest.RelativeError*math.Abs(got) {
				t.Errorf("%s: statistic of the samples %v, summary %v: beyond the sketch's error", name, got, want.v)
			}
		} else if !close(got, want.v) {
			t.Errorf("%s: statistic of the samples %v, summary %v", name, got, want.v)
		}
		checked++
	}
	if checked < 30 {
		t.Errorf("only %d bootstrappable metrics checked", checked)
	}
}

// With requests counted several times, the statistic is gonum's over the
// values repeated that often.
func TestStatisticOfAResample(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		var s samples
		var expanded []float64
		type v struct {
			x float64
			c int32
		}
		var vs []v
		clusters := 1 + rng.IntN(8)
		s.sizes = make([]int, clusters)
		weights := make([]int, clusters)
		for c := range clusters {
			s.sizes[c] = 1 + rng.IntN(4)
			weights[c] = rng.IntN(3)
			for range s.sizes[c] {
				x := float64(rng.IntN(20)) // ties on purpose
				vs = append(vs, v{x, int32(c)})
				for range weights[c] {
					expanded = append(expanded, x)
				}
			}
		}
		if len(expanded) == 0 {
			continue
		}
		slices.SortFunc(vs, func(a, b v) int { return int(a.x - b.x) })
		for _, e := range vs {
			s.values = append(s.values, e.x)
			s.cluster = append(s.cluster, e.c)
		}
		slices.Sort(expanded)
		for _, p := range []float64{0, 0.01, 0.5, 0.9, 0.95, 0.99, 1} {
			want := stat.Quantile(p, stat.LinInterp, expanded, nil)
			if got := s.statistic(p, false, weights); !close(got, want) {
				t.Fatalf("trial %d: p%v = %v, gonum says %v (values %v weights %v)", trial, p, got, want, vs, weights)
			}
		}
		if got, want := s.statistic(0, true, weights), stat.Mean(expanded, nil); !close(got, want) {
			t.Fatalf("trial %d: mean %v, want %v", trial, got, want)
		}
	}
}

func TestRegressionDirection(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cur, base float64
		better    direction
		want      float64
	}{
		{130, 100, lower, 0.3}, {80, 100, lower, -0.2}, {90, 100, higher, 0.1}, {120, 100, higher, -0.2},
		{0, 0, lower, 0}, {5, 5, higher, 0},
	} {
		if got := regression(tt.cur, tt.base, tt.better); !close(got, tt.want) {
			t.Errorf("regression(%v, %v, %v) = %v, want %v", tt.cur, tt.base, tt.better, got, tt.want)
		}
	}
	if got := regression(1, 0, lower); got <= 1e300 {
		t.Errorf("from a zero baseline: %v, want +Inf", got)
	}
}

func BenchmarkBootstrapITL(b *testing.B) {
	base := world{seed: 1, n: 2000, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond}.run(b)
	cur := world{seed: 2, n: 2000, ttft: 100 * time.Millisecond, itl: 5 * time.Millisecond}.run(b)
	gs := mustParse(b, "client.itl.p99 regression < 10%")
	for b.Loop() {
		gs.EvaluateRuns(cur, &base, DefaultBootstrap)
	}
}

// The windowed estimator gives exactly what a full walk gives, for every
// resample, including ones whose quantile falls outside the pilot's window.
func TestEstimatorMatchesTheFullWalk(t *testing.T) {
	t.Parallel()
	run := baseWorld.run(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, name := range []string{"client.itl.p50", "client.itl.p99", "client.ttft.p90", "client.e2e.mean", "client.itl.mean"} {
		m := vocabulary[name]
		s := samplesOf(run.Records, m.family)
		e := newEstimator(s, m)
		w := make([]int, len(s.sizes))
		for i := range 400 {
			clear(w)
			// After the pilot, some resamples keep only a few requests:
			// their quantiles land far from the window.
			draws := len(w)
			if i > pilotResamples && i%7 == 0 {
				draws = 1 + rng.IntN(5)
			}
			for range draws {
				w[rng.IntN(len(w))]++
			}
			if got, want := e.estimate(w), s.statistic(m.p, m.stat == "mean", w); !close(got, want) {
				t.Fatalf("%s resample %d: estimator %v, full walk %v", name, i, got, want)
			}
		}
		if m.stat != "mean" && e.below == nil {
			t.Errorf("%s: no window after %d resamples", name, e.calls)
		}
	}
}
