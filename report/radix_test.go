package report

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
)

// The radix sorts give the order the comparison sorts give, to the bit:
// short and long slices, ties, negatives, zeros, infinities, values that
// share most of their bytes; with NaN or −0 the comparison sort is used.
func TestRadixSortsAsComparison(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 1))
	gen := map[string]func(i int) float64{
		"latencies": func(int) float64 { return (time.Duration(rng.ExpFloat64()*3e7) + time.Millisecond).Seconds() },
		"ties":      func(int) float64 { return float64(rng.IntN(5)) / 1e3 },
		"signed":    func(int) float64 { return rng.NormFloat64() * 1e3 },
		"extremes": func(i int) float64 {
			return []float64{0, math.Inf(1), math.Inf(-1), math.MaxFloat64, -math.SmallestNonzeroFloat64, 1}[i%6]
		},
		"same high":    func(int) float64 { return 1 + float64(rng.IntN(1000))*0x1p-52 },
		"with nan":     func(i int) float64 { return []float64{2, -1, 0, math.NaN()}[i%4] },
		"minus zero":   func(i int) float64 { return []float64{0, 1e-9, -1e-9, math.Copysign(0, -1)}[i%4] },
		"descending":   func(i int) float64 { return -float64(i) },
		"all the same": func(int) float64 { return 0.25 },
	}
	for name, g := range gen {
		for _, n := range []int{0, 1, 7, radixMin - 1, radixMin, 5000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = g(i)
			}
			want := slices.Clone(xs)
			sort.Float64s(want)
			sortFloats(xs)
			for i := range xs {
				if math.Float64bits(xs[i]) != math.Float64bits(want[i]) && !(math.IsNaN(xs[i]) && math.IsNaN(want[i])) {
					t.Fatalf("%s, %d values: [%d] is %v, sort.Float64s says %v", name, n, i, xs[i], want[i])
				}
			}
		}
	}
	for _, n := range []int{3, radixMin, 7000} {
		ds := make([]time.Duration, n)
		for i := range ds {
			ds[i] = time.Duration(rng.Int64()) >> rng.IntN(60)
			if i%3 == 0 {
				ds[i] = -ds[i]
			}
		}
		want := slices.Clone(ds)
		slices.Sort(want)
		sortDurations(ds)
		if !slices.Equal(ds, want) {
			t.Fatalf("%d durations: not in order", n)
		}
	}
}

// The most requests in flight, found by merging sorted starts and ends, is
// what sorting every start and end together (an end first at a tie) and
// counting gives: many records, ties, ends before their own wire start.
func TestPeakConcurrencyAsOneSortOfEdges(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 3))
	for _, n := range []int{0, 1, 3, 100, 5000} {
		records := make([]client.Record, n)
		for i := range records {
			sent := time.Duration(1+rng.IntN(50)) * time.Millisecond
			records[i] = client.Record{Sent: sent, Wrote: sent + time.Duration(rng.IntN(3))*time.Millisecond,
				End: sent + time.Duration(rng.IntN(40))*time.Millisecond}
			if i%11 == 0 {
				records[i].Sent = 0 // never sent: not counted
			}
		}
		type edge struct {
			at time.Duration
			d  int
		}
		var edges []edge
		for _, r := range records {
			if r.Sent > 0 && r.End >= r.Sent {
				edges = append(edges, edge{r.SentOnWire(), 1}, edge{r.End, -1})
			}
		}
		slices.SortFunc(edges, func(a, b edge) int {
			if a.at != b.at {
				return int(a.at - b.at)
			}
			return a.d - b.d
		})
		want, cur := 0, 0
		for _, e := range edges {
			cur += e.d
			want = max(want, cur)
		}
		var arrivals chunkdigest.Bins
		if _, got := peaks(requestsOf(records), &arrivals); got != want {
			t.Errorf("%d records: %d in flight at most, one sort of the edges says %d", n, got, want)
		}
	}
}
