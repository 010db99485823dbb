package html

import (
	"math"
	"strings"
)

// A chart is computed whole here — every coordinate in viewBox units, every
// label a string — and the template only writes it out as inline SVG: no
// script, nothing fetched, and it prints as drawn.

// Chart frame in viewBox units: the SVG scales to the page width.
const (
	chartW       = 960.0
	chartH       = 260.0
	marginLeft   = 66.0
	marginRight  = 18.0
	marginTop    = 26.0
	marginBottom = 40.0
)

type chart struct {
	ID      string
	Title   string
	Caption string // what is drawn, in words, downsampling included
	Empty   string // why there is nothing to draw; the plot is left out
	W, H    float64
	Plot    rect
	XTicks  []tick
	YTicks  []tick
	XTitle  string
	YTitle  string
	Bands   []band   // the run's phases
	Outages []band   // when the engine could not be reached (outageBands)
	Rules   []rule   // vertical markers
	Paths   []path   // the series
	Points  []point  // marked points with a tooltip each
	Labels  []label  // annotations
	Boxes   []box    // bars
	Legend  []legend // below the plot
}

type rect struct{ X, Y, W, H float64 }

// Right and Bottom are the plot's far edges.
func (r rect) Right() float64  { return r.X + r.W }
func (r rect) Bottom() float64 { return r.Y + r.H }

type tick struct {
	Pos   float64
	Label string
}

// band shades a phase; unmeasured phases are hatched.
type band struct {
	X, W     float64
	Label    string // clipped to fit the band
	Title    string // the full name and span
	Measured bool
}

// rule is a vertical line across the plot (a phase edge, a failed scrape).
type rule struct {
	X     float64
	Class string
	Title string
}

// path is one drawn series: Class picks its look (line, area, dots, step)
// and colour (s1…s6) from the stylesheet.
type path struct {
	Class string
	D     string
	Title string
}

type point struct {
	X, Y  float64
	R     float64
	Class string
	Title string
}

type box struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type label struct {
	X, Y   float64
	Text   string
	Anchor string // start | middle | end
	Class  string
}

type legend struct {
	Class string // the series' colour class
	Kind  string // line | area | dots | dash
	Label string
}

// newChart lays out an empty frame of the standard size.
func newChart(id, title string) *chart {
	return newChartSized(id, title, chartW, chartH)
}

func newChartSized(id, title string, w, h float64) *chart {
	return &chart{ID: id, Title: title, W: w, H: h,
		Plot: rect{X: marginLeft, Y: marginTop, W: w - marginLeft - marginRight, H: h - marginTop - marginBottom}}
}

// xAxis and yAxis fit an axis to the plot area.
func (c *chart) timeX(span float64) axis {
	a := timeAxis(span, c.Plot.X, c.Plot.Right(), int(c.Plot.W/80))
	c.XTicks, c.XTitle = a.tickMarks(), timeAxisTitle(span)
	return a
}

func (c *chart) valueY(lo, hi float64, title string) axis {
	a := valueAxis(lo, hi, c.Plot.Bottom(), c.Plot.Y, max(3, int(c.Plot.H/45)))
	c.YTicks, c.YTitle = a.tickMarks(), title
	return a
}

func (c *chart) logY(lo, hi float64, title string) axis {
	a := logAxis(lo, hi, c.Plot.Bottom(), c.Plot.Y)
	c.YTicks, c.YTitle = a.tickMarks(), title
	return a
}

// phaseBands marks the run's phases on a run-clock chart.
func (c *chart) phaseBands(x axis, phases []phaseSpan) {
	for _, ph := range phases {
		x0, x1 := x.at(ph.Start), x.at(ph.End)
		x0, x1 = math.Max(x0, c.Plot.X), math.Min(x1, c.Plot.Right())
		if x1 <= x0 {
			continue
		}
		title := ph.Name + ": " + dur(ph.Start) + " to " + dur(ph.End) + " on the run clock"
		if !ph.Measured {
			title += " (not measured)"
		}
		c.Bands = append(c.Bands, band{X: x0, W: x1 - x0, Measured: ph.Measured, Title: title,
			Label: clip(ph.Name, int((x1-x0-6)/7))})
	}
}

// pathBuilder writes SVG path data. NaN values break a line.
type pathBuilder struct {
	b    strings.Builder
	open bool
}

func (p *pathBuilder) moveTo(x, y float64) {
	p.b.WriteByte('M')
	p.pair(x, y)
	p.open = true
}

func (p *pathBuilder) lineTo(x, y float64) {
	if !p.open {
		p.moveTo(x, y)
		return
	}
	p.b.WriteByte('L')
	p.pair(x, y)
}

func (p *pathBuilder) pair(x, y float64) {
	p.b.WriteString(coord(x))
	p.b.WriteByte(' ')
	p.b.WriteString(coord(y))
}

func (p *pathBuilder) horizontalTo(x float64) {
	p.b.WriteByte('H')
	p.b.WriteString(coord(x))
}

func (p *pathBuilder) verticalTo(y float64) {
	p.b.WriteByte('V')
	p.b.WriteString(coord(y))
}

// dot draws a zero-length segment: with a round line cap it renders as a
// dot, at a fraction of a <circle>'s bytes.
func (p *pathBuilder) dot(x, y float64) {
	p.moveTo(x, y)
	p.b.WriteString("h0")
	p.open = false
}

func (p *pathBuilder) brk()           { p.open = false }
func (p *pathBuilder) String() string { return p.b.String() }

// xy is one point of a series in data units.
type xy struct{ X, Y float64 }

// linePath draws points joined by straight lines; NaN Y breaks the line.
func linePath(pts []xy, x, y axis) string {
	var p pathBuilder
	for _, pt := range pts {
		if math.IsNaN(pt.Y) {
			p.brk()
			continue
		}
		p.lineTo(x.at(pt.X), y.at(pt.Y))
	}
	return p.String()
}

// stepPath draws values held over buckets [X, next X): bucketed rates are
// constant over their bucket, so stairs are the honest drawing. end closes
// the last bucket; NaN leaves a bucket out. With area set (and no NaN), the
// shape is closed down to the axis.
func stepPath(pts []xy, end float64, x, y axis, area bool) string {
	var p pathBuilder
	if len(pts) == 0 {
		return ""
	}
	base := y.at(math.Max(y.lo, 0))
	if area {
		p.moveTo(x.at(pts[0].X), base)
	}
	for i, pt := range pts {
		x1 := end
		if i+1 < len(pts) {
			x1 = pts[i+1].X
		}
		if math.IsNaN(pt.Y) {
			p.brk()
			continue
		}
		if !p.open {
			p.moveTo(x.at(pt.X), y.at(pt.Y))
		} else {
			p.verticalTo(y.at(pt.Y))
		}
		p.horizontalTo(x.at(x1))
	}
	if area {
		p.verticalTo(base)
		p.b.WriteByte('Z')
	}
	return p.String()
}

// bandPath fills between a lower and an upper series (a stacked area); the
// series share their X values.
func bandPath(lower, upper []xy, x, y axis) string {
	if len(upper) == 0 {
		return ""
	}
	var p pathBuilder
	for _, pt := range upper {
		p.lineTo(x.at(pt.X), y.at(pt.Y))
	}
	for i := len(lower) - 1; i >= 0; i-- {
		p.lineTo(x.at(lower[i].X), y.at(lower[i].Y))
	}
	p.b.WriteByte('Z')
	return p.String()
}
