package report

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/internal/interval"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
)

// wilson is the Wilson interval package interval gives k of n, as a
// summary holds it.
func wilson(k, n int) *Bounds {
	iv := interval.Proportion(k, n, 0.95)
	return &Bounds{iv.Lo, iv.Hi}
}

// A Dist's intervals are the order statistics package interval names, at
// hand-checked ranks: the median of 1..20 lies in [X(6), X(15)] (the
// binomial(20, ½) table), p90, p95 and p99 of 20 samples have no upper
// bound and are listed too few; 368 samples are the fewest a p99 bound
// needs; the mean's is Student's t.
func TestDistIntervalsAreOrderStatistics(t *testing.T) {
	t.Parallel()
	twenty := make([]float64, 20)
	for i := range twenty {
		twenty[i] = float64(i + 1)
	}
	d := distWith(slices.Clone(twenty), []float64{99.9})
	for _, c := range []struct {
		p      float64
		lo, hi float64
	}{
		{50, 6, 15},
		{90, 15, math.Inf(1)},   // P(B ≤ 19) = 1 − 0.9^20 = 0.878 < 0.975: no upper bound
		{95, 17, math.Inf(1)},   // the lower: the first k with P(B ≤ k) > 0.025, B ~ Binomial(20, p)
		{99, 19, math.Inf(1)},   // P(B ≤ 18) = 0.017, P(B ≤ 19) = 0.18
		{99.9, 20, math.Inf(1)}, // P(B ≤ 19) = 0.0198: only X(20) bounds it from below
	} {
		iv, ok := d.QuantileCI(c.p)
		if !ok || iv.Lo != c.lo || iv.Hi != c.hi || iv.N != 20 {
			t.Errorf("p%g of 1..20: interval %+v (%v), want [%g, %g]", c.p, iv, ok, c.lo, c.hi)
		}
		lo, hi := interval.QuantileRanks(c.p/100, 0.95, 20)
		if want := interval.Quantile(c.p/100, 0.95, twenty); iv != want || (lo >= 1 && twenty[lo-1] != iv.Lo) || (hi <= 20 && twenty[hi-1] != iv.Hi) {
			t.Errorf("p%g: %+v, package interval says %+v (ranks %d, %d)", c.p, iv, want, lo, hi)
		}
	}
	if want := []string{"p90", "p95", "p99", "p99.9"}; !slices.Equal(d.CI.TooFew, want) {
		t.Errorf("too few: %v, want %v", d.CI.TooFew, want)
	}
	if d.TooFew(50) || !d.TooFew(99) {
		t.Errorf("TooFew(50) %v, TooFew(99) %v", d.TooFew(50), d.TooFew(99))
	}
	// The mean 10.5, sd √35 = 5.916, t(19) = 2.093: ±2.769.
	if m, _ := d.MeanCI(); math.Abs(m.Lo-7.731) > 0.001 || math.Abs(m.Hi-13.269) > 0.001 {
		t.Errorf("mean interval %+v, want [7.731, 13.269]", m)
	}
	for _, c := range []struct {
		n      int
		bounds bool
	}{{367, false}, {368, true}} {
		xs := make([]float64, c.n)
		for i := range xs {
			xs[i] = float64(i)
		}
		if got := !distWith(xs, nil).TooFew(99); got != c.bounds {
			t.Errorf("%d samples bound a p99: %v, want %v", c.n, got, c.bounds)
		}
	}
	if d := distWith(nil, []float64{50}); d.CI != nil {
		t.Errorf("no samples, yet intervals %+v", d.CI)
	}
}

// An unbounded side is null in summary.json and reads back as infinite;
// a summary written before intervals loads with none, and says so.
func TestIntervalsJSON(t *testing.T) {
	t.Parallel()
	d := distWith([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, nil)
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	for _, want := range []string{`"p99":{"lo":9,"hi":null}`, `"p50":{"lo":2,"hi":9}`, `"too_few":["p90","p95","p99"]`, `"source":"samples"`, `"confidence":0.95`} {
		if !strings.Contains(js, want) {
			t.Errorf("summary.json's dist lacks %s:\n%s", want, js)
		}
	}
	var back Dist
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if iv, ok := back.QuantileCI(99); !ok || iv.Lo != 9 || !math.IsInf(iv.Hi, 1) || !back.TooFew(99) {
		t.Errorf("read back: p99 %+v (%v)", iv, ok)
	}
	var old Dist
	if err := json.Unmarshal([]byte(`{"n":10,"mean":5,"p50":5,"p99":9.9}`), &old); err != nil {
		t.Fatal(err)
	}
	if _, ok := old.QuantileCI(50); ok || old.TooFew(99) {
		t.Errorf("a summary without intervals claims one: %+v", old)
	}
	var lone Bounds
	if err := json.Unmarshal([]byte(`{"lo":null,"hi":null}`), &lone); err != nil || !math.IsInf(lone.Lo, -1) || !math.IsInf(lone.Hi, 1) {
		t.Errorf("null bounds read as %+v (%v)", lone, err)
	}
}

// The ITL's intervals, read from its sketch, hold the exact ones the same
// values give: each bound is the sketch's order statistic widened by the
// sketch's resolution.
func TestSketchIntervalsHoldTheExactOnes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{10, 400, 6000, 50_000} {
		var sk chunkdigest.Sketch
		ds := make([]time.Duration, n)
		for i := range ds {
			ds[i] = time.Duration((5 + rng.ExpFloat64()*20) * 1e6)
			sk.Add(ds[i])
		}
		ps := []float64{99.9}
		got, exact := sketchDist(&sk, ps), durationDist(ds, ps)
		if got.CI.Source != CISketch || exact.CI.Source != CISamples {
			t.Errorf("sources %q, %q", got.CI.Source, exact.CI.Source)
		}
		if !slices.Equal(got.CI.TooFew, exact.CI.TooFew) {
			t.Errorf("%d values: too few %v from the sketch, %v exactly", n, got.CI.TooFew, exact.CI.TooFew)
		}
		for name, e := range exact.CI.Quantiles {
			g := got.CI.Quantiles[name]
			if g.Lo > e.Lo || g.Hi < e.Hi || (e.Hi-e.Lo > 0 && (g.Hi-g.Lo) > 1.05*(e.Hi-e.Lo)+0.01*e.Hi) {
				t.Errorf("%d values, %s: sketch [%g, %g] does not hold (tightly) the exact [%g, %g]", n, name, g.Lo, g.Hi, e.Lo, e.Hi)
			}
		}
	}
}

// The error rate and the goodput fraction carry Wilson intervals: 2 of 7
// is [0.0822, 0.6411].
func TestFractionIntervals(t *testing.T) {
	t.Parallel()
	if b := wilson(2, 7); math.Abs(b.Lo-0.0822) > 0.0001 || math.Abs(b.Hi-0.6411) > 0.0001 {
		t.Errorf("Wilson 2 of 7: %+v", b)
	}
	meta, recs, rows := fixedRun()
	s := Compute(meta, recs, rows, nil, 0)
	r := s.Client.Requests
	if want := wilson(r.Failed, r.Sent-r.Canceled); r.FailedCI == nil || *r.FailedCI != *want {
		t.Errorf("error rate interval %+v, want %+v (%d of %d)", r.FailedCI, want, r.Failed, r.Sent)
	}
	if text := textOf(t, s); r.Failed > 0 && !strings.Contains(text, "error rate") {
		t.Errorf("the text summary shows no error rate with its interval:\n%s", text)
	}
}
