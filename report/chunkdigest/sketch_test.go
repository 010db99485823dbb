package chunkdigest

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat"
)

// itlLike draws n inter-token latencies shaped like a real run's: a
// decode step that varies by request, jitter, ties on whole milliseconds,
// rare stalls, a few zero gaps (two chunks in one read).
func itlLike(n int, seed uint64) []time.Duration {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]time.Duration, n)
	step := 6 * time.Millisecond
	for i := range out {
		if i%200 == 0 {
			step = time.Duration(3+rng.IntN(20)) * time.Millisecond
		}
		switch r := rng.IntN(1000); {
		case r < 3:
			out[i] = 0
		case r < 5:
			out[i] = time.Duration(100+rng.IntN(2000)) * time.Millisecond
		case r < 300:
			out[i] = step // ties
		default:
			out[i] = step + time.Duration(rng.NormFloat64()*float64(time.Millisecond))
			out[i] = max(out[i], time.Microsecond)
		}
	}
	return out
}

func exactQuantile(sorted []float64, p float64) float64 {
	return stat.Quantile(p, stat.LinInterp, sorted, nil)
}

// The sketch's quantiles are within RelativeError (0.39 %) of the exact
// ones (gonum's LinInterp over the same values), at every percentile
// reports use and many more; count, mean, standard deviation, min and max
// are exact.
func TestSketchQuantilesWithinStatedError(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3, 10, 1000, 300_000} {
		vals := itlLike(n, uint64(n))
		var s Sketch
		xs := make([]float64, n)
		for i, v := range vals {
			s.Add(v)
			xs[i] = v.Seconds()
		}
		slices.Sort(xs)
		ps := []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999, 1}
		for p := 0.005; p < 1; p += 0.01 {
			ps = append(ps, p)
		}
		worst := 0.0
		for _, p := range ps {
			want, got := exactQuantile(xs, p), s.Quantile(p)
			rel := math.Abs(got-want) / math.Max(math.Abs(want), 1e-300)
			if want == 0 {
				rel = math.Abs(got) / 1e-9 // zero gaps: exact in the sketch's first buckets
			}
			worst = max(worst, rel)
			if rel > RelativeError {
				t.Errorf("n=%d p=%g: sketch %g, exact %g: %.3f%% off, stated %.3f%%", n, p, got, want, 100*rel, 100*RelativeError)
			}
		}
		if s.N() != n || !close(s.Mean(), stat.Mean(xs, nil)) || s.Max().Seconds() != xs[n-1] || s.Min().Seconds() != xs[0] {
			t.Errorf("n=%d: n %d, mean %g (want %g), min %g max %g (want %g %g)", n, s.N(), s.Mean(), stat.Mean(xs, nil),
				s.Min().Seconds(), s.Max().Seconds(), xs[0], xs[n-1])
		}
		if n > 1 {
			if _, sd := stat.MeanStdDev(xs, nil); !close(s.StdDev(), sd) {
				t.Errorf("n=%d: stddev %g, want %g", n, s.StdDev(), sd)
			}
		}
		t.Logf("n=%d: worst quantile error %.4f%% (stated %.3f%%)", n, 100*worst, 100*RelativeError)
	}
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// AtOrBelow, which re-bins the client's ITLs into an engine's buckets, is
// off by no more than the values of the one sketch bucket the bound falls in.
func TestSketchAtOrBelow(t *testing.T) {
	t.Parallel()
	vals := itlLike(50_000, 3)
	var s Sketch
	for _, v := range vals {
		s.Add(v)
	}
	for _, bound := range []float64{0, 0.001, 0.005, 0.0075, 0.01, 0.02, 0.05, 0.1, 1, 10} {
		exact, near := 0, 0
		for _, v := range vals {
			if v.Seconds() <= bound {
				exact++
			}
			if math.Abs(v.Seconds()-bound) <= bound*RelativeError {
				near++
			}
		}
		if got := s.AtOrBelow(bound); math.Abs(got-float64(exact)) > float64(near) {
			t.Errorf("at or below %g: %g, exact %d (values within a bucket of it: %d)", bound, got, exact, near)
		}
	}
}

// Sketches merge into the same sketch whatever the split and the order.
func TestSketchMergeIsExact(t *testing.T) {
	t.Parallel()
	vals := itlLike(10_000, 9)
	var whole Sketch
	for _, v := range vals {
		whole.Add(v)
	}
	for _, parts := range []int{2, 3, 7} {
		pieces := make([]Sketch, parts)
		for i, v := range vals {
			pieces[(i*31)%parts].Add(v)
		}
		var fwd, back Sketch
		for i := range pieces {
			fwd.Merge(&pieces[i])
			back.Merge(&pieces[parts-1-i])
		}
		if !reflect.DeepEqual(trimmed(whole), trimmed(fwd)) || !reflect.DeepEqual(trimmed(fwd), trimmed(back)) {
			t.Errorf("%d parts: merged sketch differs from the whole", parts)
		}
	}
	var n Sketch
	n.AddN(7*time.Millisecond, 5)
	var one Sketch
	for range 5 {
		one.Add(7 * time.Millisecond)
	}
	if !reflect.DeepEqual(n, one) {
		t.Errorf("AddN(v, 5) differs from five Add(v)")
	}
}

func trimmed(s Sketch) Sketch {
	for len(s.counts) > 0 && s.counts[len(s.counts)-1] == 0 {
		s.counts = s.counts[:len(s.counts)-1]
	}
	return s
}

// The reservoir keeps the same requests whatever order they are offered
// in and however the offers were split.
func TestReservoirIsOrderFree(t *testing.T) {
	t.Parallel()
	keys := make([]uint64, 3*SampleSize)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range keys {
		keys[i] = rng.Uint64()
	}
	var a, b, c1, c2 Reservoir
	for i, k := range keys {
		a.Offer(k, []time.Duration{time.Duration(i)})
		b.Offer(keys[len(keys)-1-i], []time.Duration{time.Duration(len(keys) - 1 - i)})
		if i%2 == 0 {
			c1.Offer(k, []time.Duration{time.Duration(i)})
		} else {
			c2.Offer(k, []time.Duration{time.Duration(i)})
		}
	}
	c1.Merge(&c2)
	want := slices.Sorted(slices.Values(keys))[:SampleSize]
	for _, r := range []*Reservoir{&a, &b, &c1} {
		got := r.Requests()
		ks := make([]uint64, len(got))
		for i, x := range got {
			ks[i] = x.Key
		}
		if !slices.Equal(ks, want) {
			t.Fatalf("reservoir does not hold the %d smallest keys", SampleSize)
		}
	}
}

// Token arrivals land in the bin of their time, negative times included.
func TestBins(t *testing.T) {
	t.Parallel()
	var b, o Bins
	b.Add(25*time.Millisecond, 2)
	b.Add(-5*time.Millisecond, 1)
	o.Add(time.Second, 3)
	o.Add(-time.Second, 4)
	b.Merge(&o)
	var got []time.Duration
	var tokens []int64
	b.Each(func(at time.Duration, n int64) { got = append(got, at); tokens = append(tokens, n) })
	want := []time.Duration{-time.Second, -10 * time.Millisecond, 20 * time.Millisecond, time.Second}
	if !slices.Equal(got, want) || !slices.Equal(tokens, []int64{4, 1, 2, 3}) || b.Total() != 10 {
		t.Errorf("bins %v %v, want %v [4 1 2 3]", got, tokens, want)
	}
}

// Representative reads the same order statistics as Quantile does.
func TestRepresentativeFollowsTheSketch(t *testing.T) {
	t.Parallel()
	var s Sketch
	for _, v := range itlLike(20_000, 11) {
		s.Add(v)
	}
	for _, m := range []int{1, 2, 7, 1000, 20_000, 50_000} {
		got := s.Representative(m)
		want := min(m, s.N())
		if len(got) != want || !slices.IsSorted(got) {
			t.Fatalf("m=%d: %d values, sorted %v", m, len(got), slices.IsSorted(got))
		}
		for i, v := range got {
			k := uint64(s.N() - 1)
			if want > 1 {
				k = uint64(math.Round(float64(i) * float64(s.N()-1) / float64(want-1)))
			}
			if o := s.orderStat(k) / 1e9; v != o {
				t.Fatalf("m=%d: value %d is %g, order statistic %d is %g", m, i, v, k, o)
			}
		}
	}
}
