package html

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/llmbench-org/llmbench/report"
)

// Small charts sit two to a row.
const (
	smallW = 470.0
	smallH = 250.0
)

// agreeGap is the CDF gap (a fraction) below which the curves are said to
// agree: less than a twentieth of a percentage point.
const agreeGap = 5e-4

// cdfCharts draws, for each engine histogram the client also measured,
// both distributions at the engine's own bucket bounds: the engine's CDF and
// the client's samples re-binned into the same buckets.
func cdfCharts(s *report.ServerSide) ([]*chart, string) {
	if s == nil {
		return nil, "No comparison: the run has no /metrics view of the engine."
	}
	var keys []string
	for _, l := range latencyNames {
		if len(s.Latency[l.key].CDF) > 0 {
			keys = append(keys, l.key)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Latency)) {
		if !slices.Contains(keys, k) && len(s.Latency[k].CDF) > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, "No comparison: none of the engine's latency histograms measures a quantity the client measured too."
	}
	out := make([]*chart, 0, len(keys))
	for _, k := range keys {
		out = append(out, cdfChart(k, s.Latency[k]))
	}
	return out, "Each chart reads both distributions at the engine's bucket bounds only, so they are compared where the engine's histogram has data; between bounds the lines are straight because neither side says more."
}

func displayName(key string) string {
	for _, l := range latencyNames {
		if l.key == key {
			return l.name
		}
	}
	return key
}

func cdfChart(key string, d report.ServerDist) *chart {
	name := displayName(key)
	c := newChartSized("cdf-"+key, name+": client vs engine", smallW, smallH)
	n := len(d.CDF)
	// Bounds are placed evenly: the engine's buckets are often geometric, and
	// the CDF is only known at them.
	xAt := func(i int) float64 { return c.Plot.X + (float64(i)+0.5)/float64(n)*c.Plot.W }
	y := axis{lo: 0, hi: 1, p0: c.Plot.Bottom(), p1: c.Plot.Y, ticks: []float64{0, 0.25, 0.5, 0.75, 1},
		label: func(v float64) string { return fmt.Sprintf("%.0f%%", v*100) }}
	c.YTicks, c.YTitle = y.tickMarks(), "at or below (%)"
	// Bounds reaching minutes read in seconds, so labels stay short.
	unit := 1000.0
	c.XTitle = "engine bucket bound (ms)"
	if d.CDF[n-1].Bound >= 10 {
		c.XTitle, unit = "engine bucket bound (s)", 1
	}
	every := int(math.Ceil(float64(n) / maxCDFLabels))
	for i, p := range d.CDF {
		if i%every == 0 {
			c.XTicks = append(c.XTicks, tick{Pos: xAt(i), Label: shortNum(p.Bound * unit)})
		}
	}
	var server, client pathBuilder
	gapAt, gap := 0, -1.0
	for i, p := range d.CDF {
		server.lineTo(xAt(i), y.at(p.Server))
		client.lineTo(xAt(i), y.at(p.Client))
		if g := math.Abs(p.Server - p.Client); g > gap {
			gapAt, gap = i, g
		}
	}
	// The engine underlays the client, wide and light: where both agree
	// exactly, both stay visible.
	c.Paths = append(c.Paths, path{Class: "line under c2", D: server.String()}, path{Class: "line c1", D: client.String()})
	for i, p := range d.CDF {
		title := fmt.Sprintf("≤ %s ms: engine %s, client %s", ms(p.Bound), pct(p.Server), pct(p.Client))
		c.Points = append(c.Points,
			point{X: xAt(i), Y: y.at(p.Server), R: 4, Class: "under c2", Title: title},
			point{X: xAt(i), Y: y.at(p.Client), R: 2.5, Class: "c1", Title: title})
	}
	g := d.CDF[gapAt]
	c.Legend = []legend{{Class: "c1", Kind: "line", Label: "client (re-binned)"}, {Class: "c2", Kind: "line", Label: "engine histogram"}}
	c.Caption = fmt.Sprintf("Share of %s observations at or below each of the engine's %d finite bucket bounds.", name, n)
	if gap < agreeGap {
		c.Labels = append(c.Labels, label{X: c.Plot.Right() - 4, Y: c.Plot.Bottom() - 8, Text: "the curves agree at every bound", Anchor: "end", Class: "agree"})
		c.Caption += " The two agree at every bound."
	} else {
		c.Rules = append(c.Rules, rule{X: xAt(gapAt), Class: "gap", Title: fmt.Sprintf("largest gap: %s points at ≤ %s ms", num(gap*100), ms(g.Bound))})
		anchor, lx := "start", xAt(gapAt)+4
		if gapAt > n/2 {
			anchor, lx = "end", xAt(gapAt)-4
		}
		c.Labels = append(c.Labels, label{X: lx, Y: c.Plot.Y + 12, Text: fmt.Sprintf("largest gap %s pts", num(gap*100)), Anchor: anchor, Class: "gap"})
		c.Caption += fmt.Sprintf(" Largest gap: %s percentage points at ≤ %s ms (engine %s, client %s).", num(gap*100), ms(g.Bound), pct(g.Server), pct(g.Client))
	}
	if top := d.CDF[n-1]; top.Server < 1 || top.Client < 1 {
		c.Caption += fmt.Sprintf(" Above the top bound (%s ms) the engine cannot tell: %s of its observations and %s of the client's lie there.",
			ms(top.Bound), pct(1-top.Server), pct(1-top.Client))
	}
	if strings.HasPrefix(key, "itl") {
		c.Caption += " The engine may count ITL per chunk or per token (see the notes under the latency table)."
	}
	return c
}
