package html

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

func TestNiceStep(t *testing.T) {
	t.Parallel()
	tests := []struct {
		span   float64
		target int
		want   float64
	}{
		{10, 5, 2}, {10, 4, 2.5}, {1, 5, 0.2}, {1234, 5, 250}, {7, 10, 1}, {0.003, 3, 0.001}, {0, 5, 1}, {math.NaN(), 5, 1},
	}
	for _, tt := range tests {
		if got := niceStep(tt.span, tt.target); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("niceStep(%v, %d) = %v, want %v", tt.span, tt.target, got, tt.want)
		}
	}
}

func TestAxes(t *testing.T) {
	t.Parallel()
	t.Run("value axis covers the data with round ticks", func(t *testing.T) {
		t.Parallel()
		a := valueAxis(0, 1337, 200, 0, 5)
		if a.hi < 1337 || a.lo != 0 {
			t.Fatalf("domain [%v, %v] does not cover [0, 1337]", a.lo, a.hi)
		}
		labels := []string{}
		for _, tk := range a.tickMarks() {
			labels = append(labels, tk.Label)
		}
		if diff := cmp.Diff([]string{"0", "500", "1\u202f000", "1\u202f500"}, labels); diff != "" {
			t.Errorf("ticks (-want +got):\n%s", diff)
		}
		if a.at(0) != 200 || a.at(a.hi) != 0 {
			t.Errorf("the domain does not map onto the range: %v, %v", a.at(0), a.at(a.hi))
		}
	})
	t.Run("log axis spans whole decades", func(t *testing.T) {
		t.Parallel()
		a := logAxis(3, 4200, 100, 0)
		if a.lo != 1 || a.hi != 10000 {
			t.Fatalf("domain [%v, %v], want [1, 10000]", a.lo, a.hi)
		}
		if got := a.at(100); math.Abs(got-50) > 1e-9 {
			t.Errorf("100 lands at %v, want the middle", got)
		}
		if got := a.at(-5); got != 100 {
			t.Errorf("a negative value lands at %v, want the lower edge", got)
		}
	})
	t.Run("long runs read m:ss", func(t *testing.T) {
		t.Parallel()
		a := timeAxis(3600, 0, 800, 10)
		last := a.tickMarks()[len(a.ticks)-1]
		if last.Label != "1:00:00" || timeAxisTitle(3600) != "run clock (m:ss)" {
			t.Errorf("last tick %q, title %q", last.Label, timeAxisTitle(3600))
		}
		if s := timeAxis(20, 0, 800, 10); s.tickMarks()[1].Label != "2" {
			t.Errorf("short run ticks: %v", s.tickMarks())
		}
	})
}

func TestLTTB(t *testing.T) {
	t.Parallel()
	// A flat line with one spike and one dip: both must survive.
	pts := make([]xy, 10000)
	for i := range pts {
		pts[i] = xy{X: float64(i), Y: math.Sin(float64(i) / 300)}
	}
	pts[4321].Y, pts[8765].Y = 50, -50
	idx := lttbIndices(pts, 200)
	if len(idx) != 200 {
		t.Fatalf("%d points, want 200", len(idx))
	}
	if idx[0] != 0 || idx[len(idx)-1] != len(pts)-1 {
		t.Errorf("first and last points not kept: %d, %d", idx[0], idx[len(idx)-1])
	}
	if !slices.IsSorted(idx) || len(slices.Compact(slices.Clone(idx))) != len(idx) {
		t.Error("indices are not strictly increasing")
	}
	if !slices.Contains(idx, 4321) || !slices.Contains(idx, 8765) {
		t.Error("the spike or the dip was dropped")
	}
	if got := lttbIndices(pts[:50], 200); len(got) != 50 {
		t.Errorf("fewer points than asked: %d kept, want all 50", len(got))
	}
}

func TestThinDots(t *testing.T) {
	t.Parallel()
	x := axis{lo: 0, hi: 100, p0: 0, p1: 300, label: shortNum}
	y := axis{lo: 0, hi: 100, p0: 150, p1: 0, label: shortNum}
	rng := rand.New(rand.NewPCG(1, 2))
	var pts []xy
	for range 100000 {
		pts = append(pts, xy{X: rng.Float64() * 50, Y: rng.Float64() * 50}) // a dense field
	}
	pts = append(pts, xy{X: 99, Y: 99}) // and an outlier far from it
	d, drawn := thinDots(pts, x, y)
	if maxCells := int((300/dotCell + 1) * (150/dotCell + 1)); drawn > maxCells {
		t.Errorf("%d dots drawn, more than the %d cells", drawn, maxCells)
	}
	if drawn < 50*25 { // the field covers 50×25 cells, each must get its dot
		t.Errorf("only %d dots drawn: the field is not covered", drawn)
	}
	if !strings.Contains(d, "M297 1.5h0") {
		t.Error("the isolated outlier was not drawn")
	}
	if got := strings.Count(d, "h0"); got != drawn {
		t.Errorf("path has %d dots, reported %d", got, drawn)
	}
}

func TestBucketedRates(t *testing.T) {
	t.Parallel()
	b := newBucketed(10.3, 1) // the last 0.3 s joins the bucket before it
	if len(b.sums) != 10 {
		t.Fatalf("%d buckets, want 10", len(b.sums))
	}
	b.add(0.5, 2)
	b.add(9.9, 1)
	b.add(10.2, 1)
	b.add(11, 100) // past the run: ignored
	r := b.rates()
	if r[0] != (xy{0, 2}) {
		t.Errorf("first bucket %v, want 2/s", r[0])
	}
	if want := 2 / 1.3; math.Abs(r[9].Y-want) > 1e-9 {
		t.Errorf("last bucket %v/s, want %v (2 over its 1.3 s)", r[9].Y, want)
	}
	if bucketWidth(20) != 1 || bucketWidth(3000) != 10 {
		t.Errorf("bucket widths %v and %v, want 1 and 10", bucketWidth(20), bucketWidth(3000))
	}
}

func rec(phase string, sent, first, end float64, chunks ...float64) client.Record {
	r := client.Record{Phase: phase, Sent: sec(sent), FirstToken: sec(first), End: sec(end), OutputTokens: len(chunks)}
	for _, c := range chunks {
		r.Chunks = append(r.Chunks, client.Chunk{At: sec(c), Tokens: 2})
	}
	return r
}

func TestThroughputAndInFlight(t *testing.T) {
	t.Parallel()
	records := []client.Record{
		rec("a", 0.1, 0.2, 0.9, 0.2, 0.5, 0.9),
		rec("a", 0.5, 0.6, 2.5, 0.6, 1.5),
		{Phase: "a", Sent: sec(1.2), End: sec(1.4), ErrorClass: client.ErrConnect},
	}
	tp := throughputOf(records, 3)
	if diff := cmp.Diff([]xy{{0, 1}, {1, 0}, {2, 1}}, tp.okPerS); diff != "" {
		t.Errorf("completions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]xy{{0, 0}, {1, 1}, {2, 0}}, tp.failed); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	// Each chunk carries two tokens, counted where it arrived.
	if diff := cmp.Diff([]xy{{0, 8}, {1, 2}, {2, 0}}, tp.tokensPerS); diff != "" {
		t.Errorf("tokens (-want +got):\n%s", diff)
	}
	pts, step := inFlight(records, 3)
	at := func(t float64) float64 { return pts[int(math.Round(t/step))].Y }
	for _, c := range []struct{ t, want float64 }{{0, 0}, {0.6, 2}, {1.3, 2}, {2, 1}, {3, 0}} {
		if got := at(c.t); got != c.want {
			t.Errorf("in flight at %v s = %v, want %v", c.t, got, c.want)
		}
	}
}

func TestRollingQuantiles(t *testing.T) {
	t.Parallel()
	var samples []latencySample
	for i := range 100 {
		phase, v := "low", 1.0
		if i >= 50 {
			phase, v = "high", 10.0
		}
		samples = append(samples, latencySample{sent: float64(i), v: v, ok: true, phase: phase})
	}
	samples = append(samples, latencySample{sent: 60.5, v: 1000, ok: false, phase: "high"}) // failed: not counted
	p50, p99, window := rollingQuantiles(samples)
	if window != minWindow {
		t.Errorf("window %d, want %d", window, minWindow)
	}
	breaks := 0
	for i, p := range p99 {
		switch {
		case math.IsNaN(p.Y):
			breaks++
		case p.X < 50 && (p.Y != 1 || p50[i].Y != 1), p.X >= 50 && (p.Y != 10 || p50[i].Y != 10):
			t.Errorf("at %v: p50 %v p99 %v: a window crossed phases or counted a failure", p.X, p50[i].Y, p.Y)
		}
	}
	if breaks != 1 {
		t.Errorf("%d breaks between phases, want 1", breaks)
	}
}

func TestGauges(t *testing.T) {
	t.Parallel()
	row := func(target string, at float64, running, waiting float64) scrape.Row {
		return scrape.Row{Target: target, At: sec(at), OK: true, Snapshot: &scrape.Snapshot{Gauges: map[scrape.Concept]float64{
			scrape.RequestsRunning: running, scrape.RequestsWaiting: waiting, scrape.KVCacheUsage: running / 10}}}
	}
	rows := []scrape.Row{row("a", 1, 2, 0), row("b", 1.1, 3, 1), {Target: "a", At: sec(2), Error: "refused"}, row("b", 2.1, 5, 0)}
	series, ok := summedGauges(rows, scrape.RequestsRunning, scrape.RequestsWaiting, scrape.Preemptions)
	if !ok[0] || !ok[1] || ok[2] {
		t.Fatalf("present = %v, want [true true false]", ok)
	}
	// Each scrape sums every target's latest value; the failed scrape adds nothing.
	if diff := cmp.Diff([]xy{{1, 2}, {1.1, 5}, {2.1, 7}}, series[0]); diff != "" {
		t.Errorf("running (-want +got):\n%s", diff)
	}
	kv := perTargetGauge(rows, scrape.KVCacheUsage)
	if len(kv) != 2 || kv[0].name != "a" || len(kv[1].pts) != 2 {
		t.Errorf("per target: %+v", kv)
	}
	if f := failedScrapes(rows); len(f) != 1 || f[0].at != 2 {
		t.Errorf("failed scrapes: %+v", f)
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	tests := []struct{ got, want string }{
		{ms(0.0004), "0.400"}, {ms(0.0123), "12.3"}, {ms(1.5), "1\u202f500"}, {ms(-1e-9), "0"}, {ms(math.NaN()), "—"},
		{dur(0), "0 s"}, {dur(0.25), "250 ms"}, {dur(12.34), "12.3 s"}, {dur(3725), "3\u202f725 s (1:02:05)"},
		{num(3), "3"}, {num(12345.6), "12\u202f346"}, {num(1.234), "1.23"}, {num(0.0012), "0.0012"},
		{pct(0.5), "50.0 %"}, {pct(0.0012), "0.12 %"},
		{grouped(-1234567, 0), "-1\u202f234\u202f567"}, {grouped(-0.0001, 0), "0"},
		{clip("héllo wörld", 5), "héll…"}, {clip("abc", 3), "abc"}, {clip("abcdef", 0), ""},
		{evidenceValue("queue_mean_s", 0.002), "2.0 ms"}, {evidenceValue("outside_share_ratio", 0.25), "25.0 %"}, {evidenceValue("scrapes", 36), "36"},
		{shortNum(0.0025 * 1000), "2.5"}, {shortNum(1200), "1\u202f200"},
		{clock(59.6), "1:00"}, {coord(1.26), "1.3"}, {time.Duration(0).String(), "0s"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}

// TestCheckers makes sure the page checks used above can fail.
func TestCheckers(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{"<p><b>x</p>", "<div><span></div></span>", "<div/>", `<p id="a"></p><p id="a"></p>`, "<p>"} {
		if wellFormed(doc) == nil {
			t.Errorf("wellFormed accepted %q", doc)
		}
	}
	if err := wellFormed(`<svg><path d="M0 0"/></svg><br><p>ok</p>`); err != nil {
		t.Errorf("wellFormed rejected a good page: %v", err)
	}
	for _, doc := range []string{"<script>x</script>", `<p onclick="x">`, `<a href="http://x">`, `<style>@import "x.css";</style>`, `<svg><image href="x.png"/></svg>`} {
		if len(selfContained(parse(t, doc))) == 0 {
			t.Errorf("selfContained accepted %q", doc)
		}
	}
	if bad := selfContained(parse(t, `<style>.b{fill:url(#hatch)}</style><p>x</p>`)); len(bad) > 0 {
		t.Errorf("selfContained rejected the hatch pattern: %v", bad)
	}
}
