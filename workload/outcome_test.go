package workload

import (
	"math"
	"testing"
)

func TestAutoRates(t *testing.T) {
	t.Parallel()
	got := AutoRates(2, 10, 4)
	for i, want := range []float64{4, 6, 8, 10} {
		if math.Abs(got[i]-want) > 1e-12 {
			t.Errorf("AutoRates(2, 10, 4) = %v", got)
		}
	}
	// An engine that does not batch: the probe is no faster than the baseline.
	if got := AutoRates(5, 5, 2); got[0] != 2.5 || got[1] != 5 {
		t.Errorf("AutoRates(5, 5, 2) = %v, want [2.5 5]", got)
	}
}
