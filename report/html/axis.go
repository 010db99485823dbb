package html

import (
	"math"
	"strconv"
)

// axis maps data values onto chart coordinates (viewBox units) and says
// where its ticks go. A log axis maps log10 of the value; values at or below
// zero sit on its lower edge.
type axis struct {
	lo, hi float64 // the domain
	p0, p1 float64 // where lo and hi land
	log    bool
	ticks  []float64
	label  func(float64) string
}

func (a axis) at(v float64) float64 {
	if a.log {
		v = math.Log10(math.Max(v, a.lo))
		lo, hi := math.Log10(a.lo), math.Log10(a.hi)
		return a.p0 + (v-lo)/(hi-lo)*(a.p1-a.p0)
	}
	if a.hi == a.lo {
		return a.p0
	}
	return a.p0 + (v-a.lo)/(a.hi-a.lo)*(a.p1-a.p0)
}

// tickMarks places the ticks.
func (a axis) tickMarks() []tick {
	out := make([]tick, 0, len(a.ticks))
	for _, v := range a.ticks {
		out = append(out, tick{Pos: a.at(v), Label: a.label(v)})
	}
	return out
}

// niceStep is the smallest 1, 2, 2.5 or 5 × 10^k step that cuts span into at
// most target intervals.
func niceStep(span float64, target int) float64 {
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return 1
	}
	raw := span / float64(target)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// decimalsFor is how many decimals tick labels of this step need.
func decimalsFor(step float64) int {
	d := 0
	for s := step; d < 9 && math.Abs(s-math.Round(s)) > 1e-9*math.Max(1, s); s *= 10 {
		d++
	}
	return d
}

// axisLimit is the largest magnitude an axis spans: a quarter of the largest
// float64, so that the span, a rounded-up end and a step past it all stay
// finite. A value beyond it is a figure from outside (a gauge of 1.8e308
// that an engine reported), drawn at the edge, never a reason to loop.
const axisLimit = math.MaxFloat64 / 4

// clampAxis brings a value within ±axisLimit (NaN to 0).
func clampAxis(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return math.Max(-axisLimit, math.Min(axisLimit, v))
}

// valueAxis runs from 0 (or lo when negative) to a round number at or
// above hi, with about target ticks.
func valueAxis(lo, hi, p0, p1 float64, target int) axis {
	lo, hi = math.Min(0, clampAxis(lo)), clampAxis(hi)
	if hi <= lo {
		hi = lo + 1
	}
	step := niceStep(hi-lo, target)
	lo = math.Floor(lo/step) * step
	hi = math.Ceil(hi/step-1e-9) * step
	dec := decimalsFor(step)
	a := axis{lo: lo, hi: hi, p0: p0, p1: p1, label: func(v float64) string { return grouped(v, dec) }}
	// niceStep cuts the span into at most target steps; the bound on i is
	// for the float64 ends where lo + i·step no longer moves.
	for i := 0; i <= 2*target+2; i++ {
		v := lo + float64(i)*step
		if v > hi+step*1e-9 {
			break
		}
		a.ticks = append(a.ticks, v)
	}
	return a
}

// logAxis spans whole decades around [lo, hi] (lo > 0); ticks at 1, 2 and
// 5 × 10^k when few decades are shown, at the decades otherwise.
func logAxis(lo, hi, p0, p1 float64) axis {
	// Whole decades from 1e-300 to 1e300: the ends and a decade past them
	// stay finite and positive.
	decade := func(v float64, round func(float64) float64) float64 {
		if !(v > 0) {
			v = 1
		}
		return math.Pow(10, math.Max(-300, math.Min(300, round(math.Log10(math.Min(v, axisLimit))))))
	}
	lo, hi = decade(lo, math.Floor), decade(hi, math.Ceil)
	if hi <= lo {
		hi = lo * 10
	}
	decades := int(math.Round(math.Log10(hi) - math.Log10(lo)))
	mults := []float64{1}
	if decades <= 3 {
		mults = []float64{1, 2, 5}
	}
	// Beyond a dozen decades (values from outside, a 1e-300 beside a
	// 1e300) a tick every few decades keeps the labels apart.
	every := max(1, (decades+11)/12)
	a := axis{lo: lo, hi: hi, p0: p0, p1: p1, log: true, label: func(v float64) string {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}}
	if decades <= 12 {
		a.label = func(v float64) string { return strconv.FormatFloat(v, 'f', decimalsFor(v), 64) }
	}
	for k := 0; k <= decades; k += every {
		d := lo * math.Pow(10, float64(k))
		for _, m := range mults {
			if v := d * m; v <= hi*(1+1e-9) {
				a.ticks = append(a.ticks, v)
			}
		}
	}
	return a
}

// timeSteps are the tick intervals of a run-clock axis, in seconds.
var timeSteps = []float64{0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 21600, 43200, 86400}

// timeAxis is the run clock from 0 to span seconds: seconds on a short run,
// m:ss or h:mm:ss on a long one.
func timeAxis(span, p0, p1 float64, target int) axis {
	if !(span > 0) {
		span = 1
	}
	span = math.Min(span, axisLimit)
	// A clock beyond target days (a timestamp from outside, a broken
	// record) gets a step of whole days that still cuts it into at most
	// target intervals, not a tick per day.
	step := math.Max(timeSteps[len(timeSteps)-1], niceStep(span, target))
	for _, s := range timeSteps {
		if span/s <= float64(target) {
			step = s
			break
		}
	}
	label := func(v float64) string { return strconv.FormatFloat(v, 'f', decimalsFor(step), 64) }
	if span >= 600 {
		label = clock
	}
	a := axis{lo: 0, hi: span, p0: p0, p1: p1, label: label}
	for i := 0; i <= 2*target+2; i++ {
		v := float64(i) * step
		if v > span+1e-9 {
			break
		}
		a.ticks = append(a.ticks, v)
	}
	return a
}

// timeAxisTitle names the run-clock axis in the unit its labels use.
func timeAxisTitle(span float64) string {
	if span >= 600 {
		return "run clock (m:ss)"
	}
	return "run clock (s)"
}
