package html

import (
	"math"
	"slices"
	"strings"
	"testing"

	nethtml "golang.org/x/net/html"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/latencytable"
	"github.com/llmbench-org/llmbench/scrape"
)

// Engine quantiles read bucket first, the interpolated value second: a
// bucket midpoint must not pass for a measurement.
func TestQuantileCell(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		e    latencytable.Bucket
		want string
	}{
		{latencytable.Bucket{Value: 0.05, Low: 0, High: 0.1, OK: true}, "≤ 100 ms (bucket 0–100 ms), ≈ 50.0"},
		{latencytable.Bucket{Value: 0.0102, Low: 0.01, High: 0.015, OK: true}, "≤ 15.0 ms (bucket 10.0–15.0 ms), ≈ 10.2"},
		{latencytable.Bucket{Value: 400, Low: 400, High: math.Inf(1), AboveTop: true, OK: true}, "> 400 000 ms (above the top bucket)"},
		{latencytable.Bucket{}, "— (not computed for this run)"},
	} {
		if got := quantileCell(tt.e).String(); got != strings.ReplaceAll(tt.want, " 000", "\u202f000") {
			t.Errorf("quantileCell(%+v) = %q, want %q", tt.e, got, tt.want)
		}
	}
	// The page shows them so, and no longer in the old "value [bucket]" form.
	doc := renderString(t, goldenRun.input())
	for _, want := range []string{"≤ 2\u202f000 ms<span class=\"bucket\">(bucket 1\u202f000–2\u202f000 ms), ≈ ",
		// a finding's evidence too
		"server_itl_p50</dt><dd>≤ 6.0 ms (bucket 4.0–6.0 ms)</dd>"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the latency table lacks %q", want)
		}
	}
	if strings.Contains(doc, `<span class="bucket">[`) {
		t.Error("the latency table still shows a quantile as value [bucket]")
	}
}

// The sweep's new points are the phases' own client numbers, and the
// per-user rate is output tokens over the time requests were in flight.
func TestSweepPointLatenciesAndPerUser(t *testing.T) {
	t.Parallel()
	in := goldenRun.input()
	s := in.Summary
	if s.Sweep == nil || len(s.Sweep.Points) < 4 {
		t.Fatalf("the golden run has no sweep of four points: %+v", s.Sweep)
	}
	phases := map[string]report.PhaseResult{}
	for _, ph := range s.Phases {
		phases[ph.Name] = ph
	}
	for _, p := range s.Sweep.Points {
		c := phases[p.Phase].Client.Latency
		if p.ITLp50 != c.ITL.P50 || p.ITLp99 != c.ITL.P99 || p.TPOTp50 != c.TPOT.P50 || p.TPOTp99 != c.TPOT.P99 ||
			p.E2Ep50 != c.E2E.P50 || p.E2Ep99 != c.E2E.P99 {
			t.Errorf("%s: sweep point %+v does not carry the phase's quantiles %+v", p.Phase, p, c)
		}
		tokens, busy := 0, 0.0
		for i := range in.Records {
			r := &in.Records[i]
			if r.Phase == p.Phase && r.OK() {
				tokens += r.OutputTokens
				busy += r.E2E().Seconds()
			}
		}
		if want := float64(tokens) / busy; math.Abs(p.OutputTokPerSPerUser-want) > 1e-9*want || want <= 0 {
			t.Errorf("%s: %v output tok/s per user, want %d tokens / %.3f s in flight = %v", p.Phase, p.OutputTokPerSPerUser, tokens, busy, want)
		}
	}
	// Past the knee the engine is full: each user gets less.
	pts := s.Sweep.Points
	if first, last := pts[0].OutputTokPerSPerUser, pts[len(pts)-1].OutputTokPerSPerUser; !(last < first/2) {
		t.Errorf("per-user rate %v at the lowest load, %v at the highest: want it to fall past saturation", first, last)
	}
}

func chartByID(cs []*chart, id string) *chart {
	for _, c := range cs {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// The sweep draws throughput, per-user against total output rate, and each
// client latency against offered load: a point per phase with its values on
// hover, the knee marked on each.
func TestSweepCharts(t *testing.T) {
	t.Parallel()
	in := goldenRun.input()
	sw := in.Summary.Sweep
	if !sw.Saturation.Found {
		t.Fatal("the golden run finds no knee")
	}
	v := sweepOf(sw)
	var ids []string
	charts := append([]*chart{v.Capacity}, v.Charts...) // the capacity chart is drawn in the page's first section
	for _, c := range charts {
		ids = append(ids, c.ID)
	}
	if want := []string{"sweep-throughput", "sweep-per-user", "sweep-ttft", "sweep-itl", "sweep-tpot", "sweep-e2e"}; !slices.Equal(ids, want) {
		t.Fatalf("sweep charts %v, want %v", ids, want)
	}
	for _, c := range charts {
		var titled, knee int
		for _, p := range c.Points {
			if p.Title == "" {
				t.Errorf("%s: a point without a tooltip", c.ID)
			}
			if strings.Contains(p.Class, "knee") {
				knee++
			} else {
				titled++
			}
		}
		for _, r := range c.Rules {
			if r.Class == "knee" {
				knee++
			}
		}
		if knee == 0 {
			t.Errorf("%s: the knee is not marked", c.ID)
		}
		per := 1
		if strings.HasPrefix(c.ID, "sweep-") && c.ID != "sweep-per-user" {
			per = 2 // p50 and p99 (throughput: achieved and goodput)
		}
		if titled != per*len(sw.Points) {
			t.Errorf("%s: %d points with values, want %d", c.ID, titled, per*len(sw.Points))
		}
	}
	e2e := chartByID(v.Charts, "sweep-e2e")
	if !strings.Contains(e2e.Points[1].Title, "E2E p99 "+ms(sw.Points[0].E2Ep99)+" ms") {
		t.Errorf("E2E tooltip %q does not give the p99", e2e.Points[1].Title)
	}
	pu := chartByID(v.Charts, "sweep-per-user")
	if pu.XTitle != "total output tokens/s" || !strings.Contains(pu.Points[0].Title, num(sw.Points[0].OutputTokPerSPerUser)+" per user") {
		t.Errorf("per-user chart: x %q, first tooltip %q", pu.XTitle, pu.Points[0].Title)
	}

	// A latency no phase measured (0: no samples) is left out, not drawn
	// flat on the axis.
	noTPOT := *sw
	noTPOT.Points = slices.Clone(sw.Points)
	for i := range noTPOT.Points {
		noTPOT.Points[i].TPOTp50, noTPOT.Points[i].TPOTp99 = 0, 0
	}
	if c := chartByID(sweepOf(&noTPOT).Charts, "sweep-tpot"); c != nil {
		t.Errorf("a TPOT chart without samples: %+v", c)
	}
}

// The CDFs sit on a latency axis: the engine's histogram as steps rising
// at its bounds, the client's samples as a line that passes through the
// re-binned shares the summary compared at every bound.
func TestCDFOnLatencyAxis(t *testing.T) {
	t.Parallel()
	in := goldenRun.input()
	srv := in.Summary.Server
	samples := clientSamples(in.Summary, in.Records)
	charts, _ := cdfCharts(srv, samples)
	if len(charts) < 3 {
		t.Fatalf("%d CDF charts, want TTFT, ITL and E2E", len(charts))
	}
	for _, c := range charts {
		key := strings.TrimPrefix(c.ID, "cdf-")
		d := srv.Latency[key]
		if !strings.Contains(c.XTitle, "(ms") && !strings.Contains(c.XTitle, "(s") {
			t.Errorf("%s: x axis %q is not a latency", c.ID, c.XTitle)
		}
		// The engine: a move, then only horizontal and vertical strokes.
		step := c.Paths[0].D
		if !strings.HasPrefix(step, "M") || strings.ContainsAny(step[1:], "ML") || !strings.Contains(step, "V") {
			t.Errorf("%s: the engine is not drawn as steps: %.80s", c.ID, step)
		}
		x, unit, _ := latencyAxis(d.CDF, samples[key], c.Plot.X, c.Plot.Right())
		line := clientCDF(samples[key], d.CDF, x, unit.per)
		if len(line) < cdfGrid {
			t.Fatalf("%s: the client's line has %d points", c.ID, len(line))
		}
		checked := 0
		for _, p := range d.CDF {
			i := slices.IndexFunc(line, func(pt xy) bool { return pt.X == p.Bound })
			if i < 0 {
				continue
			}
			checked++
			if math.Abs(line[i].Y-p.Client) > 1e-12 {
				t.Errorf("%s: the client's line is at %v at ≤ %v s, the summary's re-binned client at %v", c.ID, line[i].Y, p.Bound, p.Client)
			}
		}
		if checked == 0 {
			t.Errorf("%s: no engine bound lies on the axis", c.ID)
		}
		if !slices.IsSortedFunc(line, func(a, b xy) int { return cmpFloat(a.Y, b.Y) }) {
			t.Errorf("%s: the client's CDF falls somewhere", c.ID)
		}
	}
	// Geometric buckets over decades are drawn on a log scale; a narrow
	// distribution on a linear one that starts near it, not at zero.
	if c := charts[0]; !strings.Contains(c.XTitle, "log scale") {
		t.Errorf("TTFT over three decades on a linear axis: %q", c.XTitle)
	}
	narrow := []scrape.CDFPoint{{Bound: 0.006, Server: 0, Client: 0}, {Bound: 0.007, Server: 0.6, Client: 0.5}, {Bound: 0.008, Server: 1, Client: 1}}
	x, unit, scale := latencyAxis(narrow, []float64{0.0065, 0.0068, 0.0071, 0.0072}, 0, 100)
	if scale != "" || unit.name != "ms" || x.lo < 5 || x.hi > 9 {
		t.Errorf("narrow TPOT axis: %v–%v %s%s, want linear ms around 6–8", x.lo, x.hi, unit.name, scale)
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// drawnIDs are the ids of the chart figures whose SVG has marks.
func drawnIDs(dom *nethtml.Node) map[string]bool {
	out := map[string]bool{}
	walk(dom, func(n *nethtml.Node) {
		if n.Data != "figure" || !hasClass(n, "chart") {
			return
		}
		id, _ := attr(n, "id")
		walk(n, func(m *nethtml.Node) {
			if d, _ := attr(m, "d"); m.Namespace == "svg" && m.Data == "path" && strings.HasPrefix(d, "M") {
				out[id] = true
			}
		})
	})
	return out
}

// newCharts are the charts issue 12 added: each must be drawn.
var newCharts = []string{"sweep-per-user", "sweep-itl", "sweep-tpot", "sweep-e2e", "cdf-ttft", "cdf-itl", "cdf-e2e"}

// Every marked point in the page carries its values as an SVG <title>.
func TestNewChartsDrawnWithTooltips(t *testing.T) {
	t.Parallel()
	dom := parse(t, renderString(t, goldenRun.input()))
	drawn := drawnIDs(dom)
	for _, id := range newCharts {
		if !drawn[id] {
			t.Errorf("chart %s is not drawn", id)
		}
	}
	circles := 0
	walk(dom, func(n *nethtml.Node) {
		if n.Namespace != "svg" || n.Data != "circle" {
			return
		}
		circles++
		if c := n.FirstChild; c == nil || c.Data != "title" || c.FirstChild == nil || strings.TrimSpace(c.FirstChild.Data) == "" {
			t.Errorf("a point without a <title>: %v", n.Attr)
		}
	})
	if circles == 0 {
		t.Error("no points at all")
	}
}
