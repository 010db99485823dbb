package html

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmbench-org/llmbench/report"
)

type sweepView struct {
	Rows       []sweepRow
	Saturation string
	Found      bool
	Goodput    bool // the points carry goodput (the scenario set an slo)
	Charts     []*chart
}

type sweepRow struct {
	Phase, Load, ReqPerS, TokPerS, TTFTp50, TTFTp99, Queue, Goodput string
	Knee                                                            bool
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
			TTFTp50: ms(p.TTFTp50), TTFTp99: ms(p.TTFTp99), Queue: queue, Goodput: goodput,
			Knee: sw.Saturation.Found && p.Phase == sw.Saturation.Phase,
		})
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
	v.Charts = []*chart{sweepThroughput(sw), sweepLatency(sw)}
	return v
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

func sweepLatency(sw *report.SweepResult) *chart {
	c := newChartSized("sweep-ttft", "TTFT vs offered load", smallW, smallH)
	maxLoad, top := 0.0, 0.0
	var p50, p99 []xy
	for _, p := range sw.Points {
		maxLoad = math.Max(maxLoad, p.Load)
		top = math.Max(top, p.TTFTp99*1000)
		p50 = append(p50, xy{X: p.Load, Y: p.TTFTp50 * 1000})
		p99 = append(p99, xy{X: p.Load, Y: p.TTFTp99 * 1000})
	}
	x := valueAxis(0, maxLoad, c.Plot.X, c.Plot.Right(), 6)
	c.XTicks, c.XTitle = x.tickMarks(), loadUnit(sw)
	y := c.valueY(0, top, "client TTFT (ms)")
	c.Paths = append(c.Paths, path{Class: "line c4", D: linePath(p50, x, y)}, path{Class: "line c5", D: linePath(p99, x, y)})
	for i, p := range sw.Points {
		c.Points = append(c.Points,
			point{X: x.at(p50[i].X), Y: y.at(p50[i].Y), R: 3, Class: "c4", Title: fmt.Sprintf("%s: TTFT p50 %s ms", p.Phase, ms(p.TTFTp50))},
			point{X: x.at(p99[i].X), Y: y.at(p99[i].Y), R: 3, Class: "c5", Title: fmt.Sprintf("%s: TTFT p99 %s ms", p.Phase, ms(p.TTFTp99))})
	}
	if s := sw.Saturation; s.Found && s.Load > 0 {
		c.Rules = append(c.Rules, rule{X: x.at(s.Load), Class: "knee", Title: "knee: " + s.Phase})
	}
	c.Legend = []legend{{Class: "c4", Kind: "line", Label: "p50"}, {Class: "c5", Kind: "line", Label: "p99"}}
	if sw.Saturation.Found {
		c.Legend = append(c.Legend, legend{Class: "knee", Kind: "rule", Label: "knee"})
	}
	c.Caption = "The client's TTFT p50 and p99 in each measured phase: past the knee, requests queue and TTFT grows."
	return c
}
