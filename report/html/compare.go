package html

import (
	"bufio"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"

	"github.com/llmbench-org/llmbench/report/comparison"
)

// comparePage is what compare.html shows: the runs, each comparison's
// tables as the text renderer words them, and the runs' client CDFs
// overlaid (decision 0802).
type comparePage struct {
	Title       string
	Runs        []string
	Charts      []*chart
	Comparisons []compareView
	Footer      string
	CSS         template.CSS
}

type compareView struct {
	Heading     string
	Differences []string
	Notes       []string
	Tables      []compareTable
	Unmatched   string
}

type compareTable struct {
	Title, Baseline, Run string
	Rows                 []compareRow
}

type compareRow struct {
	Metric, Baseline, Value, Change, Interval, Verdict string
	Class                                              string // bad | ok | "": a significant change
}

// RenderComparison writes `llmbench compare --format html`: one
// self-contained page, like report.html.
func RenderComparison(w io.Writer, c comparison.Comparison) error {
	p := comparePage{Title: "llmbench comparison", CSS: css,
		Footer: fmt.Sprintf("llmbench compare · schema %s · %g%% intervals over %d resamples. This file is self-contained: nothing is fetched when it opens.",
			comparison.Schema, 100*c.Confidence, c.Resamples)}
	for i := range c.Runs {
		p.Runs = append(p.Runs, c.RunLine(i))
	}
	p.Charts = compareCDFs(c)
	for _, a := range c.Comparisons {
		p.Comparisons = append(p.Comparisons, compareViewOf(c, a))
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := pageTemplate.ExecuteTemplate(bw, "compare", p); err != nil {
		return fmt.Errorf("render the comparison: %w", err)
	}
	return bw.Flush()
}

func compareViewOf(c comparison.Comparison, a comparison.Against) compareView {
	v := compareView{Heading: fmt.Sprintf("Run %d against run %d", a.Run+1, a.Baseline+1), Notes: a.Notes}
	for _, d := range a.Differences {
		v.Differences = append(v.Differences, fmt.Sprintf("%s (%s): %s vs %s", d.Field, d.Kind, d.Baseline, d.Run))
	}
	table := func(title string, ms []comparison.Metric) compareTable {
		t := compareTable{Title: title, Baseline: fmt.Sprintf("run %d", a.Baseline+1), Run: fmt.Sprintf("run %d", a.Run+1)}
		for _, m := range ms {
			r := compareRow{Metric: m.Metric}
			r.Baseline, r.Value, r.Change, r.Interval, r.Verdict = m.Cells()
			switch m.Verdict {
			case comparison.Worse:
				r.Class = "bad"
			case comparison.Better:
				r.Class = "ok"
			}
			t.Rows = append(t.Rows, r)
		}
		return t
	}
	for _, ph := range a.Phases {
		v.Tables = append(v.Tables, table(c.PhaseTitle(a, ph), ph.Metrics))
	}
	if len(a.Unmatched) > 0 {
		v.Unmatched = c.UnmatchedText(a)
	}
	if len(a.RunMetrics) > 0 {
		v.Tables = append(v.Tables, table("whole run", a.RunMetrics))
	}
	return v
}

// compareCDFs overlays the runs' empirical CDFs of TTFT, ITL and E2E, one
// colour per run on one axis fitted to all of them.
func compareCDFs(c comparison.Comparison) []*chart {
	pick := []struct {
		key string
		of  func(comparison.Samples) []float64
	}{
		{"ttft", func(s comparison.Samples) []float64 { return s.TTFT }},
		{"itl", func(s comparison.Samples) []float64 { return s.ITL }},
		{"e2e", func(s comparison.Samples) []float64 { return s.E2E }},
	}
	var out []*chart
	for _, k := range pick {
		sides := make([][]float64, len(c.Samples))
		for i, s := range c.Samples {
			sides[i] = k.of(s)
		}
		out = append(out, overlaidCDF(k.key, sides))
	}
	return out
}

func overlaidCDF(key string, sides [][]float64) *chart {
	name := displayName(key)
	c := newChartSized("compare-"+key, name+": the runs' distributions", smallW, smallH)
	all := slices.Concat(sides...)
	if len(all) == 0 {
		c.Empty = "No run has " + name + " samples."
		return c
	}
	y := axis{lo: 0, hi: 1, p0: c.Plot.Bottom(), p1: c.Plot.Y, ticks: []float64{0, 0.25, 0.5, 0.75, 1},
		label: func(v float64) string { return fmt.Sprintf("%.0f%%", v*100) }}
	c.YTicks, c.YTitle = y.tickMarks(), "at or below (%)"
	x, unit, scale := samplesAxis(all, c.Plot.X, c.Plot.Right())
	c.XTicks, c.XTitle = x.tickMarks(), fmt.Sprintf("%s (%s%s)", name, unit.name, scale)
	for i, xs := range sides {
		class := fmt.Sprintf("c%d", 1+(2*i)%8) // blue, orange, pink…: apart at a glance
		label := fmt.Sprintf("run %d (%s samples)", i+1, count(len(xs)))
		if len(xs) == 0 {
			c.Legend = append(c.Legend, legend{Class: "muted", Kind: "line", Label: fmt.Sprintf("run %d: no samples", i+1)})
			continue
		}
		var p pathBuilder
		for _, pt := range clientCDF(xs, nil, x, unit.per) {
			p.lineTo(x.at(pt.X*unit.per), y.at(pt.Y))
		}
		c.Paths = append(c.Paths, path{Class: "line " + class, D: p.String(), Title: label})
		c.Legend = append(c.Legend, legend{Class: class, Kind: "line", Label: label})
	}
	c.Caption = fmt.Sprintf("Share of each run's successful measured requests' %s at or below each latency (%s%s): a curve to the left is faster.", name, unit.name, scale)
	return c
}

// samplesAxis fits a latency axis to samples (seconds) as latencyAxis does
// to a client and an engine: ms (s from 10 s), a log scale over twenty-fold.
func samplesAxis(xs []float64, p0, p1 float64) (axis, latencyUnit, string) {
	lo, hi := math.Inf(1), slices.Max(xs)
	for _, v := range xs {
		if v > 0 {
			lo = math.Min(lo, v)
		}
	}
	if math.IsInf(lo, 1) || hi <= lo {
		lo, hi = 0, math.Max(hi*2, 1e-3)
	}
	unit := latencyUnit{"ms", 1000}
	if hi >= 10 {
		unit = latencyUnit{"s", 1}
	}
	lo, hi = lo*unit.per, hi*unit.per
	if lo > 0 && hi/lo >= 20 {
		return looseLogAxis(lo, hi, p0, p1), unit, ", log scale"
	}
	if lo < (hi-lo)/2 {
		lo = 0
	}
	step := niceStep(hi-lo, 5)
	lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step-1e-9)*step
	dec := decimalsFor(step)
	a := axis{lo: lo, hi: hi, p0: p0, p1: p1, label: func(v float64) string { return grouped(v, dec) }}
	for v := lo; v <= hi+step*1e-9; v += step {
		a.ticks = append(a.ticks, math.Round(v/step)*step)
	}
	return a, unit, ""
}
