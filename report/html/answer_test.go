package html

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestGaugeTop(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ peak, full, want float64 }{
		{0.6, 100, 0.75}, // a 0.6 % signal fills the chart
		{40, 100, 50},    // a quarter of headroom
		{90, 100, 100},   // never above the full scale…
		{130, 100, 130},  // …unless the peak is
		{0, 100, 1},      // an idle gauge still has an axis
		{math.NaN(), 100, 1},
	} {
		if got := gaugeTop(c.peak, c.full); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("gaugeTop(%v, %v) = %v, want %v", c.peak, c.full, got, c.want)
		}
	}
}

// The histogram counts every length once, in bins that cover the smallest
// to the largest, and its caption says the extremes.
func TestLengthChart(t *testing.T) {
	t.Parallel()
	xs := []float64{100, 101, 101, 150, 200, 260, 260, 260, 499}
	c := lengthChart("x", "X", "tokens", xs)
	if c.Empty != "" {
		t.Fatal(c.Empty)
	}
	n := 0
	for _, b := range c.Boxes {
		var k int
		_, after, _ := strings.Cut(b.Title, ": ")
		if _, err := fmt.Sscan(strings.TrimSuffix(after, " requests"), &k); err != nil {
			t.Fatalf("bar title %q: %v", b.Title, err)
		}
		n += k
		if b.X < c.Plot.X-1e-9 || b.X+b.W > c.Plot.Right()+1e-9 {
			t.Errorf("bar %q outside the plot", b.Title)
		}
	}
	if n != len(xs) {
		t.Errorf("the bars count %d lengths, want %d", n, len(xs))
	}
	if !strings.Contains(c.Caption, "min 100") || !strings.Contains(c.Caption, "max 499") {
		t.Errorf("caption %q lacks the extremes", c.Caption)
	}
	if e := lengthChart("y", "Y", "tokens", nil); e.Empty == "" {
		t.Error("no lengths drew a chart")
	}
}

// The golden run's spread agrees with its records and its summary, and a
// sweep's headline figures are its knee's, not the pooled ones.
func TestSpreadAndHeadline(t *testing.T) {
	t.Parallel()
	in := goldenRun.input()
	p := build(in)
	s := in.Summary
	lo := math.Inf(1)
	measured := measuredPhases(s)
	for _, r := range in.Records {
		if r.OK() && measured[r.Phase] {
			lo = math.Min(lo, r.E2E().Seconds())
		}
	}
	var e2e *spreadRow
	for i := range p.Spread {
		if p.Spread[i].Name == displayName("e2e") {
			e2e = &p.Spread[i]
		}
	}
	if e2e == nil || e2e.Min != ms(lo) || e2e.Max != ms(s.Client.Latency.E2E.Max) || e2e.Std != ms(s.Client.Latency.E2E.StdDev) {
		t.Errorf("E2E spread %+v, want min %s, std %s, max %s", e2e, ms(lo), ms(s.Client.Latency.E2E.StdDev), ms(s.Client.Latency.E2E.Max))
	}
	sw := s.Sweep
	if len(p.Headline) == 0 || p.Headline[0].Label != "capacity" || p.Headline[0].Value != num(sw.Saturation.Capacity) {
		t.Fatalf("a sweep's headline does not lead with its capacity: %+v", p.Headline)
	}
	for _, pt := range sw.Points {
		if pt.Phase == sw.Saturation.Phase && p.Headline[1].Value != num(pt.RequestsPerS) {
			t.Errorf("headline throughput %s, want the knee's %s", p.Headline[1].Value, num(pt.RequestsPerS))
		}
	}
	plain := in
	plain.Summary.Sweep = nil
	if q := build(plain); len(q.Headline) != len(q.Tiles) || q.Headline[1].Value != num(s.Client.Throughput.RequestsPerSec) {
		t.Errorf("a plain run's headline is not its overview: %+v", q.Headline)
	}
}
