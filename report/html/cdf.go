package html

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/llmbench-org/llmbench/report/chunkdigest"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/latencytable"
	"github.com/llmbench-org/llmbench/scrape"
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
// both distributions on a real latency axis: the engine's CDF as steps at its
// bucket bounds (it knows nothing between them), the client's from its own
// samples (seconds, by histogram key) as a line.
func cdfCharts(s *report.ServerSide, samples map[string][]float64) ([]*chart, string) {
	if s == nil {
		return nil, "No comparison: the run has no /metrics view of the engine."
	}
	var keys []string
	for _, l := range latencytable.Latencies {
		if len(s.Latency[l.Key].CDF) > 0 {
			keys = append(keys, l.Key)
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
		out = append(out, cdfChart(k, s.Latency[k], samples[k]))
	}
	return out, "Each chart puts both distributions on a real latency axis. The engine's histogram is known only at its bucket bounds, " +
		"so it is drawn as steps that rise at each bound: where inside a bucket its observations lie, it cannot say. " +
		"The client's line is its own samples over the measured phases; the dots at each bound are where the two are compared " +
		"(the client's samples re-binned into the engine's buckets)."
}

// clientSamples are the client's latencies (seconds) over the measured
// phases (every phase when none is marked measured), by the engine's
// histogram keys: the samples the summary compared with the engine's.
func clientSamples(s report.Summary, records []client.Record) map[string][]float64 {
	in := Input{Records: records}.digested()
	return clientSamplesOf(s, in.Records, in.Digest)
}

// clientSamplesOf is clientSamples with the ITLs from the digest's sketch
// (chunkdigest.Sketch.Representative).
func clientSamplesOf(s report.Summary, records []client.Record, digest *chunkdigest.Digest) map[string][]float64 {
	measured := map[string]bool{}
	for _, ph := range s.Phases {
		if ph.Measured {
			measured[ph.Name] = true
		}
	}
	out := map[string][]float64{}
	for i := range records {
		r := &records[i]
		if !r.OK() || len(measured) > 0 && !measured[r.Phase] {
			continue
		}
		if d, ok := r.TTFT(); ok {
			out["ttft"] = append(out["ttft"], d.Seconds())
		}
		if d, ok := r.TPOT(); ok {
			out["tpot"] = append(out["tpot"], d.Seconds())
		}
		out["e2e"] = append(out["e2e"], r.E2E().Seconds())
	}
	itl := digest.Of(func(phase string) bool { return len(measured) == 0 || measured[phase] }).ITL
	if xs := itl.Representative(report.RepresentativeITLs); len(xs) > 0 {
		out["itl"] = xs
	}
	return out
}

func displayName(key string) string { return latencytable.Name(key) }

// cdfGrid is how many points of the client's CDF are drawn between the
// axis ends, besides the engine's bounds.
const cdfGrid = 200

func cdfChart(key string, d report.ServerDist, samples []float64) *chart {
	name := displayName(key)
	c := newChartSized("cdf-"+key, name+": client vs engine", smallW, smallH)
	n := len(d.CDF)
	y := axis{lo: 0, hi: 1, p0: c.Plot.Bottom(), p1: c.Plot.Y, ticks: []float64{0, 0.25, 0.5, 0.75, 1},
		label: func(v float64) string { return fmt.Sprintf("%.0f%%", v*100) }}
	c.YTicks, c.YTitle = y.tickMarks(), "at or below (%)"

	x, unit, scale := latencyAxis(d.CDF, samples, c.Plot.X, c.Plot.Right())
	c.XTicks = x.tickMarks()
	c.XTitle = fmt.Sprintf("%s (%s%s)", name, unit.name, scale)
	// at places a latency (seconds) on the plot, clamped to it.
	at := func(sec float64) float64 { return math.Min(math.Max(x.at(sec*unit.per), c.Plot.X), c.Plot.Right()) }
	inside := func(sec float64) bool { v := sec * unit.per; return v >= x.lo*(1-1e-9) && v <= x.hi*(1+1e-9) }

	// The engine: 0 up to its first bound, then each bound's share held
	// until the next bound.
	var server pathBuilder
	server.moveTo(c.Plot.X, y.at(0))
	for _, p := range d.CDF {
		server.horizontalTo(at(p.Bound))
		server.verticalTo(y.at(p.Server))
	}
	top := d.CDF[n-1]
	if top.Server >= 1-1e-9 {
		server.horizontalTo(c.Plot.Right())
	}
	c.Paths = append(c.Paths, path{Class: "line under c2", D: server.String()})
	if top.Server < 1-1e-9 && at(top.Bound) < c.Plot.Right() {
		c.Paths = append(c.Paths, path{Class: "line c2 dash", D: fmt.Sprintf("M%s %sH%s", coord(at(top.Bound)), coord(y.at(top.Server)), coord(c.Plot.Right())),
			Title: fmt.Sprintf("above the top bound (%s ms) the engine cannot tell where its last %s lie", ms(top.Bound), pct(1-top.Server))})
	}

	// The client: every sample, counted at a grid of points along the axis
	// and at the engine's bounds (where it matches the re-binned share).
	clientLine := clientCDFPath(samples, d.CDF, x, y, unit.per)
	clientLabel := "client (every sample)"
	if clientLine == "" {
		var p pathBuilder
		for _, pt := range d.CDF {
			if inside(pt.Bound) {
				p.lineTo(at(pt.Bound), y.at(pt.Client))
			}
		}
		clientLine, clientLabel = p.String(), "client (re-binned)"
	}
	c.Paths = append(c.Paths, path{Class: "line c1", D: clientLine})

	gapAt, gap := 0, -1.0
	for i, p := range d.CDF {
		if g := math.Abs(p.Server - p.Client); g > gap {
			gapAt, gap = i, g
		}
		if !inside(p.Bound) {
			continue
		}
		title := fmt.Sprintf("≤ %s ms: engine %s, client %s", ms(p.Bound), pct(p.Server), pct(p.Client))
		c.Points = append(c.Points,
			point{X: at(p.Bound), Y: y.at(p.Server), R: 4, Class: "under c2", Title: title},
			point{X: at(p.Bound), Y: y.at(p.Client), R: 2.5, Class: "c1", Title: title})
	}
	g := d.CDF[gapAt]
	c.Legend = []legend{{Class: "c1", Kind: "line", Label: clientLabel}, {Class: "c2", Kind: "step", Label: "engine histogram (steps at its bounds)"}}
	c.Caption = fmt.Sprintf("Share of %s observations at or below each latency (%s%s). The engine's histogram is known at its %d finite bucket bounds only: a step rises at each.",
		name, unit.name, scale, n)
	if gap < agreeGap {
		c.Labels = append(c.Labels, label{X: c.Plot.Right() - 4, Y: c.Plot.Bottom() - 8, Text: "the curves agree at every bound", Anchor: "end", Class: "agree"})
		c.Caption += " The two agree at every bound."
	} else {
		gx := at(g.Bound)
		c.Rules = append(c.Rules, rule{X: gx, Class: "gap", Title: fmt.Sprintf("largest gap: %s points at ≤ %s ms", num(gap*100), ms(g.Bound))})
		anchor, lx := "start", gx+4
		if gx > c.Plot.X+c.Plot.W/2 {
			anchor, lx = "end", gx-4
		}
		c.Labels = append(c.Labels, label{X: lx, Y: c.Plot.Y + 12, Text: fmt.Sprintf("largest gap %s pts", num(gap*100)), Anchor: anchor, Class: "gap"})
		c.Caption += fmt.Sprintf(" Largest gap: %s percentage points at ≤ %s ms (engine %s, client %s).", num(gap*100), ms(g.Bound), pct(g.Server), pct(g.Client))
	}
	if top.Server < 1 || top.Client < 1 {
		c.Caption += fmt.Sprintf(" Above the top bound (%s ms) the engine cannot tell: %s of its observations and %s of the client's lie there.",
			ms(top.Bound), pct(1-top.Server), pct(1-top.Client))
	}
	if strings.HasPrefix(key, "itl") {
		c.Caption += " The engine may count ITL per chunk or per token (see the notes under the latency table)."
	}
	return c
}

// latencyUnit is how a latency axis is labelled: per is the display units
// per second.
type latencyUnit struct {
	name string
	per  float64
}

// latencyAxis fits an axis, in ms (s once it reaches 10 s), to where either
// side's CDF changes: from the last bound below which neither has anything
// (or the client's fastest sample) to the first bound where the engine has
// everything (or the client's slowest). Spans over twenty-fold are drawn on a
// log scale, as geometric buckets are.
func latencyAxis(cdf []scrape.CDFPoint, samples []float64, p0, p1 float64) (axis, latencyUnit, string) {
	n := len(cdf)
	lo, hi := cdf[0].Bound, cdf[n-1].Bound
	for _, p := range cdf {
		if p.Server >= 1-1e-9 {
			hi = p.Bound
			break
		}
	}
	empty := false
	for _, p := range cdf {
		if p.Server > 0 || p.Client > 0 {
			break
		}
		lo, empty = p.Bound, true
	}
	minPos, maxS := math.Inf(1), math.Inf(-1)
	for _, v := range samples {
		if v > 0 && v < minPos {
			minPos = v
		}
		maxS = math.Max(maxS, v)
	}
	if !math.IsInf(minPos, 1) && !empty {
		lo = math.Min(lo, minPos)
	}
	if !math.IsInf(maxS, -1) {
		hi = math.Max(hi, maxS)
	}
	if hi <= lo {
		hi = lo * 2
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

// clientCDF is the client's empirical CDF at cdfGrid+1 points spread along
// the axis and at each engine bound inside it: X in seconds, Y the share of
// samples at or below. nil without samples.
func clientCDF(samples []float64, cdf []scrape.CDFPoint, x axis, per float64) []xy {
	if len(samples) == 0 {
		return nil
	}
	grid := make([]float64, 0, cdfGrid+1+len(cdf))
	for i := 0; i <= cdfGrid; i++ {
		f := float64(i) / cdfGrid
		v := x.lo + f*(x.hi-x.lo)
		if x.log {
			v = x.lo * math.Pow(x.hi/x.lo, f)
		}
		grid = append(grid, v/per)
	}
	for _, p := range cdf {
		if v := p.Bound * per; v > x.lo && v < x.hi {
			grid = append(grid, p.Bound)
		}
	}
	slices.Sort(grid)
	grid = slices.Compact(grid)
	counts := make([]int, len(grid)+1)
	for _, s := range samples {
		j, _ := slices.BinarySearch(grid, s) // the first grid point ≥ s
		counts[j]++
	}
	out := make([]xy, 0, len(grid))
	below := 0
	for j, g := range grid {
		below += counts[j]
		out = append(out, xy{X: g, Y: float64(below) / float64(len(samples))})
	}
	return out
}

// clientCDFPath draws clientCDF as a line; empty without samples.
func clientCDFPath(samples []float64, cdf []scrape.CDFPoint, x, y axis, per float64) string {
	var p pathBuilder
	for _, pt := range clientCDF(samples, cdf, x, per) {
		p.lineTo(x.at(pt.X*per), y.at(pt.Y))
	}
	return p.String()
}

// looseLogAxis is a log axis whose ends are the nearest 1, 2 or 5 × 10^k
// around [lo, hi] (lo > 0) rather than whole decades, so a distribution
// spanning 1.3 decades is not drawn in a third of the plot; ticks at 1, 2 and
// 5 × 10^k over up to three decades, at the decades beyond.
func looseLogAxis(lo, hi, p0, p1 float64) axis {
	mults := []float64{1, 2, 5}
	down := func(v float64) float64 {
		d := math.Pow(10, math.Floor(math.Log10(v)))
		for i := len(mults) - 1; i >= 0; i-- {
			if mults[i]*d <= v*(1+1e-9) {
				return mults[i] * d
			}
		}
		return d
	}
	up := func(v float64) float64 {
		d := math.Pow(10, math.Floor(math.Log10(v)))
		for _, m := range append(mults, 10) {
			if m*d >= v*(1-1e-9) {
				return m * d
			}
		}
		return 10 * d
	}
	lo, hi = down(lo), up(hi)
	if hi <= lo {
		hi = up(lo * 1.5)
	}
	a := axis{lo: lo, hi: hi, p0: p0, p1: p1, log: true, label: shortNum}
	use := mults
	if math.Log10(hi/lo) > 3.01 {
		use = []float64{1}
	}
	for d := math.Pow(10, math.Floor(math.Log10(lo))); d <= hi*(1+1e-9); d *= 10 {
		for _, m := range use {
			if v := m * d; v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				a.ticks = append(a.ticks, v)
			}
		}
	}
	return a
}
