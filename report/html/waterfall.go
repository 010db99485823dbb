package html

import (
	"fmt"

	"github.com/llmbench-org/llmbench/report/reconcile"
)

type waterfallView struct {
	Facts []fact
	Rows  []waterfallRow
	Bar   *chart
}

type waterfallRow struct {
	Phase, Mean, P50, P90, P99, Share string
	Class                             string // the phase's colour in the bar
}

func waterfallOf(w *reconcile.WaterfallSummary) *waterfallView {
	if w == nil {
		return nil
	}
	clockState := "consistent"
	if !w.ClockConsistent {
		clockState = "contradictory (the engine's clock stepped): the phases are approximate"
	}
	v := &waterfallView{Facts: []fact{
		{Label: "joined to the trace", Value: fmt.Sprintf("%s of %s requests", count(w.Joined), count(w.Requests)), Class: warnIf(w.Unjoined > 0)},
		{Label: "add up to their E2E", Value: fmt.Sprintf("%s within %s (largest overrun %s)", count(w.WithinTolerance), dur(w.Tolerance), dur(w.ResidualMax))},
		{Label: "engine clock offset", Value: dur(w.ClockOffset) + ", " + clockState, Class: warnIf(!w.ClockConsistent)},
		{Label: "foreign requests in the trace", Value: count(w.Foreign), Class: warnIf(w.Foreign > 0)},
		{Label: "E2E of joined requests", Value: fmt.Sprintf("mean %s · p50 %s · p99 %s", dur(w.E2E.Mean), dur(w.E2E.P50), dur(w.E2E.P99))},
	}}
	total := 0.0
	for _, p := range w.Phases {
		total += p.Mean
	}
	c := newChartSized("waterfall-bar", "Where the mean request's time went", chartW, 80)
	c.Plot = rect{X: marginLeft, Y: 8, W: chartW - marginLeft - marginRight, H: 36}
	x := valueAxis(0, total*1000, c.Plot.X, c.Plot.Right(), 10)
	c.XTicks, c.XTitle = x.tickMarks(), "ms"
	at := 0.0
	for i, p := range w.Phases {
		class := fmt.Sprintf("c%d", 1+i%8)
		v.Rows = append(v.Rows, waterfallRow{Phase: p.Name, Mean: ms(p.Mean), P50: ms(p.P50), P90: ms(p.P90), P99: ms(p.P99), Share: pct(p.Share), Class: class})
		x0, x1 := x.at(at*1000), x.at((at+p.Mean)*1000)
		at += p.Mean
		c.Boxes = append(c.Boxes, box{X: x0, Y: c.Plot.Y, W: x1 - x0, H: c.Plot.H, Class: class,
			Title: fmt.Sprintf("%s: mean %s ms, %s of E2E", p.Name, ms(p.Mean), pct(p.Share))})
		if x1-x0 > float64(len(p.Name))*6.2+8 {
			c.Labels = append(c.Labels, label{X: (x0 + x1) / 2, Y: c.Plot.Y + c.Plot.H/2 + 4, Text: p.Name, Anchor: "middle", Class: "onbar"})
		}
		c.Legend = append(c.Legend, legend{Class: class, Kind: "area", Label: p.Name})
	}
	c.Caption = "Mean time per phase of the requests joined to the engine's trace log, from the client's send to the end of its stream."
	if len(w.Phases) > 0 {
		v.Bar = c
	}
	return v
}
