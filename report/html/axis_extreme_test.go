package html

import (
	"math"
	"testing"
)

// Values from outside can be any float64: an engine's gauge of 1.797e308,
// two targets' sum at +Inf, a NaN. Every axis still ends, with a handful of
// ticks at finite positions.
func TestAxesSurviveExtremeValues(t *testing.T) {
	extremes := []float64{0, -1, 1e-320, 1, 1337, 1e300, math.MaxFloat64, -math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN()}
	check := func(name string, a axis) {
		t.Helper()
		if len(a.ticks) == 0 || len(a.ticks) > 40 {
			t.Errorf("%s: %d ticks", name, len(a.ticks))
		}
		for _, tk := range a.tickMarks() {
			if math.IsNaN(tk.Pos) || math.IsInf(tk.Pos, 0) {
				t.Errorf("%s: tick %q at %v", name, tk.Label, tk.Pos)
			}
		}
	}
	for _, lo := range extremes {
		for _, hi := range extremes {
			check("value", valueAxis(lo, hi, 200, 0, 5))
			if lo > 0 && hi > 0 {
				check("log", logAxis(lo, hi, 100, 0))
			}
		}
		check("time", timeAxis(lo, 0, 800, 10))
	}
}
