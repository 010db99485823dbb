package html

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/latencytable"
)

type sweepView struct {
	Rows       []sweepRow
	Saturation string
	Found      bool
	Goodput    bool // the points carry goodput (the scenario set an slo)
	// Capacity is the achieved-against-offered chart: the sweep's answer,
	// drawn in the page's first section (decision 0801), not among Charts.
	Capacity *chart
	Charts   []*chart
	TooFew   bool // a figure is too small a sample for its rank (the legend says what its mark means)
	GPU      bool // the points carry GPU telemetry: utilisation and energy per token beside each load
}

type sweepRow struct {
	Phase, Load, ReqPerS, TokPerS, Queue, Goodput string
	PerUser                                       string // output tok/s per user
	N, ITLN                                       string // the samples behind the TTFT and the ITL quantiles
	TTFTp50, TTFTp99, ITLp50, ITLp99              figure // ms, each with its 95 % interval
	GoodFraction                                  figure // within the SLO, with its 95 % interval under it
	Knee                                          bool
	GPUUtil, EnergyPerToken                       string // "—" without GPU telemetry
}

func sweepOf(sw *report.SweepResult) *sweepView {
	if sw == nil || len(sw.Points) == 0 {
		return nil
	}
	v := &sweepView{Found: sw.Saturation.Found}
	for _, p := range sw.Points {
		queue := "absent"
		if p.QueueMean >= 0 {
			queue = num(p.QueueMean)
		}
		goodput := "—"
		if p.GoodputPerS != nil {
			v.Goodput, goodput = true, num(*p.GoodputPerS)
		}
		v.Rows = append(v.Rows, sweepRow{
			Phase: p.Phase, Load: num(p.Load) + " " + p.LoadUnit, ReqPerS: num(p.RequestsPerS), TokPerS: num(p.OutputTokPerS),
			N: count(p.N["ttft"]), ITLN: count(p.N["itl"]),
			TTFTp50: pointFigure(p, "ttft", 50, p.TTFTp50), TTFTp99: pointFigure(p, "ttft", 99, p.TTFTp99),
			ITLp50: pointFigure(p, "itl", 50, p.ITLp50), ITLp99: pointFigure(p, "itl", 99, p.ITLp99),
			Queue: queue, Goodput: goodput, GoodFraction: goodFraction(p),
			PerUser: num(p.OutputTokPerSPerUser),
			Knee:    sw.Saturation.Found && p.Phase == sw.Saturation.Phase,
			GPUUtil: "—", EnergyPerToken: "—",
		})
		if p.GPUUtilization != nil || p.EnergyPerOutputTokenJ != nil {
			row := &v.Rows[len(v.Rows)-1]
			v.GPU = true
			if p.GPUUtilization != nil {
				row.GPUUtil = pct(*p.GPUUtilization)
			}
			if p.EnergyPerOutputTokenJ != nil {
				row.EnergyPerToken = report.Joules(*p.EnergyPerOutputTokenJ)
			}
		}
		v.TooFew = v.TooFew || len(p.TooFew) > 0
	}
	if sw.Saturation.Found {
		v.Saturation = fmt.Sprintf("Saturation: the engine stopped scaling after %s (offered %s); capacity about %s requests/s: %s.",
			sw.Saturation.Phase, num(sw.Saturation.Load), num(sw.Saturation.Capacity), sw.Saturation.Reason)
	} else {
		v.Saturation = "Saturation not reached: " + sw.Saturation.Reason
	}
	if g := sw.GoodputPeak; g != nil {
		v.Saturation += " Goodput " + strings.TrimPrefix(g.String(), "goodput ") + "."
	}
	v.Capacity, v.Charts = sweepThroughput(sw), []*chart{sweepPerUser(sw)}
	for _, l := range sweepLatencies {
		if c := sweepLatency(sw, l); c != nil {
			v.Charts = append(v.Charts, c)
		}
	}
	return v
}

// pointFigure is a sweep point's quantile in ms with its interval ("—"
// without samples).
func pointFigure(p report.SweepPoint, latency string, q, v float64) figure {
	if p.N != nil && p.N[latency] == 0 {
		return figure{V: "—"}
	}
	b, ok := p.Interval(latency, q)
	return figureOf(v, latencytable.Interval{Lo: b.Lo, Hi: b.Hi, Known: ok})
}

// goodFraction is a point's share of requests within the SLO with its
// interval ("—" without an slo).
func goodFraction(p report.SweepPoint) figure {
	if p.GoodFraction == nil {
		return figure{V: "—"}
	}
	f := figure{V: pct(*p.GoodFraction)}
	if b := p.GoodFractionCI; b != nil {
		f.CI = pct(b.Lo) + "–" + pct(b.Hi)
	}
	return f
}

// sweepLatency is one client latency the sweep charts against offered load.
type sweepLatencyOf struct {
	id, key, name, why string
	p50, p99           func(report.SweepPoint) float64
}

var sweepLatencies = []sweepLatencyOf{
	{"sweep-ttft", "ttft", "TTFT", "past the knee, requests queue and TTFT grows.",
		func(p report.SweepPoint) float64 { return p.TTFTp50 }, func(p report.SweepPoint) float64 { return p.TTFTp99 }},
	{"sweep-itl", "itl", "ITL", "the gaps between a request's tokens, which widen when a fuller batch makes each decoding step slower.",
		func(p report.SweepPoint) float64 { return p.ITLp50 }, func(p report.SweepPoint) float64 { return p.ITLp99 }},
	{"sweep-tpot", "tpot", "TPOT", "each request's time per output token after its first, which grows with the batch as ITL does.",
		func(p report.SweepPoint) float64 { return p.TPOTp50 }, func(p report.SweepPoint) float64 { return p.TPOTp99 }},
	{"sweep-e2e", "e2e", "E2E", "what a user waited for the whole answer, queueing included.",
		func(p report.SweepPoint) float64 { return p.E2Ep50 }, func(p report.SweepPoint) float64 { return p.E2Ep99 }},
}

func loadUnit(sw *report.SweepResult) string {
	if len(sw.Points) == 0 || sw.Points[0].LoadUnit == "" {
		return "offered load"
	}
	return "offered load (" + sw.Points[0].LoadUnit + ")"
}

func sweepThroughput(sw *report.SweepResult) *chart {
	c := newChartSized("sweep-throughput", "Throughput vs offered load", smallW, smallH)
	openLoop := strings.HasPrefix(sw.Points[0].LoadUnit, "requests/s")
	maxLoad, top := 0.0, 0.0
	for _, p := range sw.Points {
		maxLoad = math.Max(maxLoad, p.Load)
		top = math.Max(top, p.RequestsPerS)
	}
	if openLoop {
		top = math.Max(top, maxLoad)
	}
	x := valueAxis(0, maxLoad, c.Plot.X, c.Plot.Right(), 6)
	c.XTicks, c.XTitle = x.tickMarks(), loadUnit(sw)
	y := c.valueY(0, top, "achieved requests/s")
	if openLoop {
		var d pathBuilder
		d.moveTo(x.at(0), y.at(0))
		end := math.Min(x.hi, y.hi)
		d.lineTo(x.at(end), y.at(end))
		c.Paths = append(c.Paths, path{Class: "line muted dash", D: d.String()})
		c.Legend = append(c.Legend, legend{Class: "muted", Kind: "dash", Label: "achieved = offered"})
	}
	pts := make([]xy, 0, len(sw.Points))
	for _, p := range sw.Points {
		pts = append(pts, xy{X: p.Load, Y: p.RequestsPerS})
	}
	c.Paths = append(c.Paths, path{Class: "line c1", D: linePath(pts, x, y)})
	c.Legend = append(c.Legend, legend{Class: "c1", Kind: "line", Label: "achieved"})
	if sw.Points[0].GoodputPerS != nil {
		good := make([]xy, 0, len(sw.Points))
		for _, p := range sw.Points {
			if p.GoodputPerS != nil {
				good = append(good, xy{X: p.Load, Y: *p.GoodputPerS})
				c.Points = append(c.Points, point{X: x.at(p.Load), Y: y.at(*p.GoodputPerS), R: 3, Class: "c2",
					Title: fmt.Sprintf("%s: goodput %s req/s met the SLO", p.Phase, num(*p.GoodputPerS))})
			}
		}
		c.Paths = append(c.Paths, path{Class: "line c2", D: linePath(good, x, y)})
		c.Legend = append(c.Legend, legend{Class: "c2", Kind: "line", Label: "goodput (met the SLO)"})
	}
	for _, p := range sw.Points {
		c.Points = append(c.Points, point{X: x.at(p.Load), Y: y.at(p.RequestsPerS), R: 3.5, Class: "c1",
			Title: fmt.Sprintf("%s: offered %s, achieved %s req/s", p.Phase, num(p.Load), num(p.RequestsPerS))})
	}
	if s := sw.Saturation; s.Found {
		for _, p := range sw.Points {
			if p.Phase != s.Phase {
				continue
			}
			px, py := x.at(p.Load), y.at(p.RequestsPerS)
			c.Points = append(c.Points, point{X: px, Y: py, R: 7, Class: "knee", Title: "knee: " + p.Phase})
			c.Labels = append(c.Labels, label{X: px, Y: py - 12, Text: "knee: " + clip(p.Phase, 24), Anchor: "middle", Class: "knee"})
		}
		if s.Capacity > 0 {
			c.Paths = append(c.Paths, path{Class: "line bad dash", D: fmt.Sprintf("M%s %sH%s", coord(c.Plot.X), coord(y.at(s.Capacity)), coord(c.Plot.Right())),
				Title: fmt.Sprintf("capacity %s requests/s", num(s.Capacity))})
			c.Legend = append(c.Legend, legend{Class: "bad", Kind: "dash", Label: "capacity " + num(s.Capacity) + " req/s"})
		}
	}
	c.Caption = "Each measured phase's achieved request rate against the load it offered; the knee is the last point still scaling."
	return c
}

// sweepLatency charts a client latency's p50 and p99 per phase against the
// offered load; nil when no phase has a sample of it (0 means none).
func sweepLatency(sw *report.SweepResult, l sweepLatencyOf) *chart {
	maxLoad, top := 0.0, 0.0
	var p50, p99 []xy
	for _, p := range sw.Points {
		maxLoad = math.Max(maxLoad, p.Load)
		a, b := l.p50(p)*1000, l.p99(p)*1000
		if a <= 0 && b <= 0 {
			a, b = math.NaN(), math.NaN()
		} else {
			top = math.Max(top, b)
		}
		p50 = append(p50, xy{X: p.Load, Y: a})
		p99 = append(p99, xy{X: p.Load, Y: b})
	}
	if top == 0 {
		return nil
	}
	c := newChartSized(l.id, l.name+" vs offered load", smallW, smallH)
	x := valueAxis(0, maxLoad, c.Plot.X, c.Plot.Right(), 6)
	c.XTicks, c.XTitle = x.tickMarks(), loadUnit(sw)
	// Latencies growing by decades past the knee would flatten the points
	// before it onto the axis: a log scale keeps both readable.
	bottom := math.Inf(1)
	for _, p := range p50 {
		if p.Y > 0 {
			bottom = math.Min(bottom, p.Y)
		}
	}
	y, logScale := c.valueY(0, top, "client "+l.name+" (ms)"), top/bottom >= 30
	if logScale {
		y = looseLogAxis(bottom, top, c.Plot.Bottom(), c.Plot.Y)
		c.YTicks, c.YTitle = y.tickMarks(), "client "+l.name+" (ms, log scale)"
	}
	c.Paths = append(c.Paths, path{Class: "line c4", D: linePath(p50, x, y)}, path{Class: "line c5", D: linePath(p99, x, y)})
	whiskers, open := false, false
	for i, p := range sw.Points {
		if math.IsNaN(p50[i].Y) {
			continue
		}
		for _, q := range []struct {
			p     float64
			v     float64
			at    xy
			class string
		}{{50, l.p50(p), p50[i], "c4"}, {99, l.p99(p), p99[i], "c5"}} {
			f := pointFigure(p, l.key, q.p, q.v)
			title := fmt.Sprintf("%s: offered %s, %s p%g %s ms", p.Phase, num(p.Load), l.name, q.p, f.V)
			if f.TooFew {
				title += latencytable.TooFewMark
			}
			if b, ok := p.Interval(l.key, q.p); ok {
				title += " (95 % interval " + f.CI + " ms)"
				c.Paths = append(c.Paths, whisker(x.at(q.at.X), b, y, q.class))
				whiskers, open = true, open || !b.Bounded()
			}
			c.Points = append(c.Points, point{X: x.at(q.at.X), Y: y.at(q.at.Y), R: 3, Class: q.class, Title: title})
		}
	}
	if s := sw.Saturation; s.Found && s.Load > 0 {
		c.Rules = append(c.Rules, rule{X: x.at(s.Load), Class: "knee", Title: "knee: " + s.Phase + ", offered " + num(s.Load)})
	}
	c.Legend = []legend{{Class: "c4", Kind: "line", Label: "p50"}, {Class: "c5", Kind: "line", Label: "p99"}}
	if sw.Saturation.Found {
		c.Legend = append(c.Legend, legend{Class: "knee", Kind: "rule", Label: "knee"})
	}
	c.Caption = fmt.Sprintf("The client's %s p50 and p99 in each measured phase: %s", l.name, l.why)
	if whiskers {
		c.Caption += " Whiskers: each figure's 95 % interval."
	}
	if open {
		c.Caption += " A dashed whisker runs to the top: the phase had too few samples to bound that percentile from above (" + latencytable.TooFewMark + ")."
	}
	if logScale {
		c.Caption += " The latency axis is logarithmic: it spans more than thirtyfold."
	}
	return c
}

// whisker is a vertical line at x over the interval b (seconds) on y (ms),
// kept inside the plot; dashed where the sample cannot bound a side (it
// runs to the plot's edge).
func whisker(x float64, b report.Bounds, y axis, class string) path {
	clamp := func(v float64) float64 { return math.Min(math.Max(v, y.lo), y.hi) }
	var d pathBuilder
	d.moveTo(x, y.at(clamp(b.Lo*1000)))
	d.lineTo(x, y.at(clamp(b.Hi*1000)))
	if !b.Bounded() {
		class += " open"
	}
	return path{Class: "whisker " + class, D: d.String()}
}

// sweepPerUser trades the engine's total output rate against what one
// request in flight gets: one point per phase, the knee ringed.
func sweepPerUser(sw *report.SweepResult) *chart {
	c := newChartSized("sweep-per-user", "Output tokens/s per user vs total", smallW, smallH)
	maxX, maxY := 0.0, 0.0
	pts := make([]xy, 0, len(sw.Points))
	for _, p := range sw.Points {
		maxX = math.Max(maxX, p.OutputTokPerS)
		maxY = math.Max(maxY, p.OutputTokPerSPerUser)
		pts = append(pts, xy{X: p.OutputTokPerS, Y: p.OutputTokPerSPerUser})
	}
	x := valueAxis(0, maxX, c.Plot.X, c.Plot.Right(), 6)
	c.XTicks, c.XTitle = x.tickMarks(), "total output tokens/s"
	y := c.valueY(0, maxY, "output tokens/s per user")
	c.Paths = append(c.Paths, path{Class: "line c3", D: linePath(pts, x, y)})
	for _, p := range sw.Points {
		c.Points = append(c.Points, point{X: x.at(p.OutputTokPerS), Y: y.at(p.OutputTokPerSPerUser), R: 3.5, Class: "c3",
			Title: fmt.Sprintf("%s: offered %s, %s output tok/s in total, %s per user", p.Phase, num(p.Load), num(p.OutputTokPerS), num(p.OutputTokPerSPerUser))})
	}
	c.Legend = []legend{{Class: "c3", Kind: "line", Label: "one point per phase, in order"}}
	if s := sw.Saturation; s.Found {
		for _, p := range sw.Points {
			if p.Phase != s.Phase {
				continue
			}
			px, py := x.at(p.OutputTokPerS), y.at(p.OutputTokPerSPerUser)
			c.Points = append(c.Points, point{X: px, Y: py, R: 7, Class: "knee", Title: "knee: " + p.Phase})
			anchor, lx := "start", px+10
			if px > c.Plot.X+c.Plot.W/2 {
				anchor, lx = "end", px-10
			}
			c.Labels = append(c.Labels, label{X: lx, Y: py - 8, Text: "knee: " + clip(p.Phase, 24), Anchor: anchor, Class: "knee"})
			c.Legend = append(c.Legend, legend{Class: "knee", Kind: "ring", Label: "knee"})
		}
	}
	c.Caption = "Each measured phase's total output tokens/s against the output tokens/s one request in flight saw " +
		"(its output tokens ÷ the sum of the requests' E2E: the total ÷ the mean requests in flight). " +
		"Up and right is better; past the knee more load buys no total rate and costs every user."
	return c
}
