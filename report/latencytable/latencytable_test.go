package latencytable

import (
	"math"
	"strconv"
	"testing"
)

func TestName(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{"ttft": "TTFT", "ttfc": "TTFC", "itl": "ITL", "tpot": "TPOT", "e2e": "E2E", "queue": "queue", "": ""} {
		if got := Name(key); got != want {
			t.Errorf("Name(%q) = %q, want %q", key, got, want)
		}
	}
}

// An interval reads "lo–hi", an open side "∞"; it is too few exactly when
// known and open on a side; unknown (an old summary) it reads nothing.
func TestInterval(t *testing.T) {
	t.Parallel()
	f := func(sec float64) string { return strconv.FormatFloat(sec*1000, 'f', 1, 64) }
	inf := math.Inf(1)
	for _, c := range []struct {
		iv     Interval
		text   string
		tooFew bool
	}{
		{Interval{Lo: 0.398, Hi: 0.431, Known: true}, "398.0–431.0", false},
		{Interval{Lo: 0.455, Hi: inf, Known: true}, "455.0–∞", true},
		{Interval{Lo: -inf, Hi: 0.431, Known: true}, "−∞–431.0", true},
		{Interval{Lo: -inf, Hi: inf, Known: true}, "−∞–∞", true},
		{Interval{Lo: -inf, Hi: inf}, "", false},
	} {
		if got := c.iv.Range(f); got != c.text {
			t.Errorf("%+v: Range %q, want %q", c.iv, got, c.text)
		}
		if got := c.iv.TooFew(); got != c.tooFew {
			t.Errorf("%+v: TooFew %v, want %v", c.iv, got, c.tooFew)
		}
	}
}
