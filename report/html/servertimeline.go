package html

import (
	"fmt"

	"github.com/llmbench-org/llmbench/report"
)

// serverTimelineOf is the per-request server timeline's section: the join,
// the slowest 1 %'s verdict, the mean TTFT split into its parts as a bar, and
// every part's distribution (decode beside them, not in the bar: it comes
// after the first token). It reuses the waterfall's view.
func serverTimelineOf(st *report.ServerTimeline) *waterfallView {
	if st == nil {
		return nil
	}
	what, items, _ := st.Account()
	v := &waterfallView{Facts: []fact{
		{Label: "joined to " + what, Value: fmt.Sprintf("%s of %s requests (%s by trace id, %s by request id)",
			count(st.Joined), count(st.Records), count(st.ByTraceID), count(st.ByRequestID)), Class: warnIf(st.JoinRate < 0.999)},
		{Label: items + " received", Value: count(st.Spans)},
	}}
	for _, c := range st.SpansUnjoined {
		v.Facts = append(v.Facts, fact{Label: items + " not joined", Value: fmt.Sprintf("%s: %s", count(c.N), c.Reason), Class: "warn"})
	}
	for _, c := range st.RecordsUnjoined {
		v.Facts = append(v.Facts, fact{Label: "requests not joined", Value: fmt.Sprintf("%s: %s", count(c.N), c.Reason), Class: "warn"})
	}
	if s := st.Slowest; s != nil {
		v.Facts = append(v.Facts, fact{Label: "the slowest 1%", Value: s.Verdict})
	}
	ttft := st.Parts["ttft"].Mean
	c := newChartSized("server-timeline-bar", "Where the mean request's TTFT went", chartW, 80)
	c.Plot = rect{X: marginLeft, Y: 8, W: chartW - marginLeft - marginRight, H: 36}
	x := valueAxis(0, max(ttft, 1e-9)*1000, c.Plot.X, c.Plot.Right(), 10)
	c.XTicks, c.XTitle = x.tickMarks(), "ms"
	at := 0.0
	for i, name := range report.TimelineParts {
		d := st.Parts[name]
		class := fmt.Sprintf("c%d", 1+i%8)
		share := ""
		if ttft > 0 && name != "decode" && name != "ttft" {
			share = pct(d.Mean / ttft)
		}
		v.Rows = append(v.Rows, waterfallRow{Phase: name, Mean: ms(d.Mean), P50: ms(d.P50), P90: ms(d.P90), P99: ms(d.P99), Share: share, Class: class})
		if name == "decode" || name == "ttft" || d.Mean <= 0 {
			continue // after the first token, the total, or a negative clock offset: not a piece of the bar
		}
		x0, x1 := x.at(at*1000), x.at((at+d.Mean)*1000)
		at += d.Mean
		c.Boxes = append(c.Boxes, box{X: x0, Y: c.Plot.Y, W: x1 - x0, H: c.Plot.H, Class: class,
			Title: fmt.Sprintf("%s: mean %s ms, %s of TTFT", name, ms(d.Mean), share)})
		if x1-x0 > float64(len(name))*6.2+8 {
			c.Labels = append(c.Labels, label{X: (x0 + x1) / 2, Y: c.Plot.Y + c.Plot.H/2 + 4, Text: name, Anchor: "middle", Class: "onbar"})
		}
		c.Legend = append(c.Legend, legend{Class: class, Kind: "area", Label: name})
	}
	c.Caption = "Mean time per part of the requests joined to " + what + ", from the client's send to its first token."
	if ttft > 0 {
		v.Bar = c
	}
	return v
}
