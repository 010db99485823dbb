package quantile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// TestOfSortedIsGonums: the same float64, bit for bit, as gonum's
// LinInterp quantile, for every length up to 60, with ties, negatives,
// zeros and infinities, at and near both ends and at the points where the
// order statistic changes.
func TestOfSortedIsGonums(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	ps := []float64{0, 1e-9, 0.001, 0.01, 0.1, 0.25, 1.0 / 3, 0.5, 0.9, 0.95, 0.99, 0.999, 1 - 1e-12, 1}
	for n := 1; n <= 60; n++ {
		for trial := range 20 {
			xs := make([]float64, n)
			for i := range xs {
				switch trial % 4 {
				case 0: // latencies: positive, spread over decades
					xs[i] = math.Exp(rng.NormFloat64() * 3)
				case 1: // many ties
					xs[i] = float64(rng.IntN(3))
				case 2: // negatives and zeros (differences between runs)
					xs[i] = float64(rng.IntN(11)-5) / 4
				case 3: // infinities at the ends
					xs[i] = []float64{math.Inf(-1), -1, 0, 2.5, math.Inf(1)}[rng.IntN(5)]
				}
			}
			slices.Sort(xs)
			// Every point where ⌈p·n⌉ changes, and either side of it.
			extra := []float64{}
			for k := range n + 1 {
				p := float64(k) / float64(n)
				extra = append(extra, p, math.Nextafter(p, 0), math.Nextafter(p, 1))
			}
			for _, p := range slices.Concat(ps, extra) {
				if p < 0 || p > 1 {
					continue
				}
				got, want := OfSorted(p, xs), stat.Quantile(p, stat.LinInterp, xs, nil)
				if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
					t.Fatalf("n=%d p=%v %v: %v, gonum says %v", n, p, xs, got, want)
				}
			}
		}
	}
}

// TestOfSortedEdges: NaN as gonum answers it, and the panics gonum has.
func TestOfSortedEdges(t *testing.T) {
	t.Parallel()
	for _, xs := range [][]float64{{math.NaN()}, {math.NaN(), 1, 2}} {
		if q := OfSorted(0.5, xs); !math.IsNaN(q) {
			t.Errorf("OfSorted(0.5, %v) = %v, gonum says NaN", xs, q)
		}
	}
	for _, c := range []struct {
		p  float64
		xs []float64
	}{{0.5, nil}, {-0.1, []float64{1}}, {1.1, []float64{1}}, {math.NaN(), []float64{1}}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("OfSorted(%v, %v) did not panic", c.p, c.xs)
				}
			}()
			OfSorted(c.p, c.xs)
		}()
	}
	if got := OfSorted(0.5, []float64{1, 2, 3, 4}); got != 2 {
		t.Errorf("median of 1..4 = %v; LinInterp reads 2 (p·n = 2 is the second order statistic exactly)", got)
	}
	if got := OfSorted(0.9, []float64{0, 10}); got != 8 {
		t.Errorf("p90 of {0, 10} = %v, want 8", got)
	}
}
