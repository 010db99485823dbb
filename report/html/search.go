package html

import (
	"fmt"
	"math"

	"github.com/llmbench-org/llmbench/report"
)

// searchView is a capacity search: its answer, the probe table and the
// chart of each probe's good fraction (with its interval) against its load.
type searchView struct {
	Answer   string
	LoadUnit string
	Rows     []searchRow
	Chart    *chart
}

type searchRow struct {
	Phase, Load, Verdict, Good, Interval, ReqPerS, TTFTp99, TPOTp99 string
	Class                                                           string // ok | bad | "" (inconclusive)
}

func searchOf(s *report.SearchResult) *searchView {
	if s == nil {
		return nil
	}
	v := &searchView{Answer: s.String(), LoadUnit: s.LoadUnit}
	for _, p := range s.Probes {
		v.Rows = append(v.Rows, searchRow{
			Phase: p.Phase, Load: num(p.Load), Verdict: p.Verdict, Class: verdictClass(p.Verdict),
			Good:     fmt.Sprintf("%d/%d (%.1f%%)", p.Good, p.Judged, 100*p.GoodFraction),
			Interval: fmt.Sprintf("[%.1f%%, %.1f%%]", 100*p.GoodLo, 100*p.GoodHi),
			ReqPerS:  num(p.RequestsPerS), TTFTp99: ms(p.TTFTp99), TPOTp99: ms(p.TPOTp99),
		})
	}
	if len(s.Probes) > 0 {
		v.Chart = searchChart(s)
	}
	return v
}

func verdictClass(v string) string {
	switch v {
	case "pass":
		return "ok"
	case "fail":
		return "bad"
	}
	return ""
}

// searchChart draws each probe's good fraction with its 95 % interval
// against its load, coloured by verdict, the target as a dashed line and
// the capacity as a marked rule.
func searchChart(s *report.SearchResult) *chart {
	c := newChartSized("search-probes", "Capacity search: share of requests within the SLO vs load", smallW, smallH)
	top := 0.0
	for _, p := range s.Probes {
		top = math.Max(top, p.Load)
	}
	x := valueAxis(0, top*1.05, c.Plot.X, c.Plot.Right(), 6)
	c.XTicks, c.XTitle = x.tickMarks(), "load ("+s.LoadUnit+")"
	// In percent, as the probe table and the rest of the page say shares.
	y := c.valueY(0, 100, "good (%)")
	var target pathBuilder
	target.moveTo(x.at(x.lo), y.at(100*s.Target))
	target.lineTo(x.at(x.hi), y.at(100*s.Target))
	c.Paths = append(c.Paths, path{Class: "line muted dash", D: target.String(), Title: fmt.Sprintf("target %g%%", 100*s.Target)})
	c.Legend = append(c.Legend, legend{Class: "muted", Kind: "dash", Label: fmt.Sprintf("target %g%% good", 100*s.Target)})
	classes := map[string]string{"pass": "c3", "fail": "bad", "inconclusive": "muted"}
	for _, p := range s.Probes {
		cl := classes[p.Verdict]
		var bar pathBuilder
		bar.moveTo(x.at(p.Load), y.at(100*p.GoodLo))
		bar.lineTo(x.at(p.Load), y.at(100*p.GoodHi))
		c.Paths = append(c.Paths, path{Class: "line " + cl, D: bar.String()})
		c.Points = append(c.Points, point{X: x.at(p.Load), Y: y.at(100 * p.GoodFraction), R: 4, Class: cl,
			Title: fmt.Sprintf("%s: %s at %s %s, %.1f%% good [%.1f%%, %.1f%%] of %d", p.Phase, p.Verdict, num(p.Load), s.LoadUnit,
				100*p.GoodFraction, 100*p.GoodLo, 100*p.GoodHi, p.Judged)})
	}
	for _, l := range []struct{ class, label string }{{"c3", "pass"}, {"bad", "fail"}, {"muted", "inconclusive"}} {
		c.Legend = append(c.Legend, legend{Class: l.class, Kind: "dots", Label: l.label})
	}
	if s.Capacity > 0 {
		c.Rules = append(c.Rules, rule{X: x.at(s.Capacity), Class: "knee", Title: "capacity " + num(s.Capacity) + " " + s.LoadUnit})
		c.Labels = append(c.Labels, label{X: x.at(s.Capacity), Y: c.Plot.Y + 12, Text: "capacity " + num(s.Capacity), Anchor: "end", Class: "knee"})
	}
	c.Caption = "Each point is a probe: the share of its requests that met every SLO bound, with its 95 % Wilson interval. " +
		"A probe passes when the whole interval is at or above the target, fails when all of it is below; the capacity is the largest load that passed."
	return c
}
