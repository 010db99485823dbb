// Package chunkdigest digests each record's chunks once, when it is read,
// into what the reports need of them: a few numbers per request (Request),
// and mergeable aggregates per phase (ITL sketches, token arrivals over the
// run clock, a deterministic sample of requests with their ITLs). The chunks
// themselves are then dropped, so a report's memory does not grow with the
// number of chunks. docs/decisions/0012-streaming-reports.md says why.
package chunkdigest

import (
	"math"
	"math/bits"
	"time"
)

// subBits sets the sketch's resolution: 2^subBits sub-buckets per power of
// two, so a bucket is at most 1/256 of its lower bound wide and any value
// read from it is within 0.39 % of every value it holds (values below
// 256 ns are kept exactly). RelativeError states it.
const subBits = 8

const subBuckets = 1 << subBits

// RelativeError bounds how far a Sketch's quantile is from the exact one
// (stat.LinInterp over the same values), relative to the exact one.
const RelativeError = 1.0 / subBuckets

// Sketch is a log-linear histogram of durations in the HDR style: exact
// below 256 ns, then 256 sub-buckets per power of two. Count, sum, sum of
// squares, min and max are exact integers, so merging sketches in any order
// gives the same sketch bit for bit. The zero value is empty and ready.
type Sketch struct {
	counts     []uint64 // by bucket index
	n          uint64
	sum        int64         // nanoseconds
	sqHi, sqLo uint64        // sum of squares in nanoseconds², 128 bits
	min, max   time.Duration // exact; valid when n > 0
	negative   uint64        // values below 0, counted in bucket 0
}

// bucketOf is the bucket index of a non-negative value.
func bucketOf(v uint64) int {
	if v < subBuckets {
		return int(v)
	}
	e := bits.Len64(v) - 1 // ≥ subBits
	sub := (v >> (e - subBits)) & (subBuckets - 1)
	return (e-subBits+1)<<subBits + int(sub)
}

// bucketBounds is the range [lo, lo+width) of values bucket i holds.
func bucketBounds(i int) (lo, width float64) {
	if i < subBuckets {
		return float64(i), 1
	}
	e := i>>subBits + subBits - 1
	sub := i & (subBuckets - 1)
	shift := e - subBits
	return float64(uint64(subBuckets+sub) << shift), float64(uint64(1) << shift)
}

// Add records one value.
func (s *Sketch) Add(d time.Duration) {
	if s.n == 0 || d < s.min {
		s.min = d
	}
	if s.n == 0 || d > s.max {
		s.max = d
	}
	s.n++
	s.sum += int64(d)
	a := d
	if a < 0 {
		a = -a
		s.negative++
	}
	hi, lo := bits.Mul64(uint64(a), uint64(a))
	var carry uint64
	s.sqLo, carry = bits.Add64(s.sqLo, lo, 0)
	s.sqHi += hi + carry
	i := 0
	if d > 0 {
		i = bucketOf(uint64(d))
	}
	if i >= len(s.counts) {
		s.counts = append(s.counts, make([]uint64, i+1-len(s.counts))...)
	}
	s.counts[i]++
}

// addAll records every value of vs, as Add would one by one: the sums
// and extremes are kept in registers and added once (they are integers, so
// the sketch is the same bit for bit).
func (s *Sketch) addAll(vs []time.Duration) {
	if len(vs) == 0 {
		return
	}
	lo, hi := vs[0], vs[0]
	if s.n > 0 {
		lo, hi = s.min, s.max
	}
	var sum int64
	var sqHi, sqLo, negative uint64
	counts := s.counts
	for _, d := range vs {
		lo, hi = min(lo, d), max(hi, d)
		sum += int64(d)
		a, i := d, 0
		switch {
		case d > 0:
			i = bucketOf(uint64(d))
		case d < 0:
			a = -a
			negative++
		}
		h, l := bits.Mul64(uint64(a), uint64(a))
		var carry uint64
		sqLo, carry = bits.Add64(sqLo, l, 0)
		sqHi += h + carry
		if i >= len(counts) {
			counts = append(counts, make([]uint64, i+1-len(counts))...)
		}
		counts[i]++
	}
	s.counts = counts
	s.min, s.max = lo, hi
	s.n += uint64(len(vs))
	s.sum += sum
	s.negative += negative
	var carry uint64
	s.sqLo, carry = bits.Add64(s.sqLo, sqLo, 0)
	s.sqHi += sqHi + carry
}

// reset empties s, keeping its buckets' array.
func (s *Sketch) reset() { *s = Sketch{counts: s.counts[:0]} }

// Merge adds every value of o to s.
func (s *Sketch) Merge(o *Sketch) {
	if o == nil || o.n == 0 {
		return
	}
	if s.n == 0 || o.min < s.min {
		s.min = o.min
	}
	if s.n == 0 || o.max > s.max {
		s.max = o.max
	}
	s.n += o.n
	s.sum += o.sum
	s.negative += o.negative
	var carry uint64
	s.sqLo, carry = bits.Add64(s.sqLo, o.sqLo, 0)
	s.sqHi += o.sqHi + carry
	if len(o.counts) > len(s.counts) {
		s.counts = append(s.counts, make([]uint64, len(o.counts)-len(s.counts))...)
	}
	for i, c := range o.counts {
		s.counts[i] += c
	}
}

// N is how many values the sketch holds.
func (s *Sketch) N() int { return int(s.n) }

// Min and Max are the exact extremes (0 when empty).
func (s *Sketch) Min() time.Duration { return s.min }
func (s *Sketch) Max() time.Duration { return s.max }

// Mean is the exact mean in seconds.
func (s *Sketch) Mean() float64 {
	if s.n == 0 {
		return 0
	}
	return float64(s.sum) / float64(s.n) / 1e9
}

// StdDev is the sample standard deviation in seconds (0 with fewer than two
// values), from the exact sums.
func (s *Sketch) StdDev() float64 {
	if s.n < 2 {
		return 0
	}
	sq := float64(s.sqHi)*0x1p64 + float64(s.sqLo)
	n := float64(s.n)
	mean := float64(s.sum) / n
	v := (sq - mean*float64(s.sum)) / (n - 1)
	return math.Sqrt(max(v, 0)) / 1e9
}

// orderStat estimates the k-th smallest value (0-based) in nanoseconds: the
// values of a bucket are taken as spread evenly across it, and the estimate
// is kept within the exact min and max.
func (s *Sketch) orderStat(k uint64) float64 {
	if k == 0 {
		return float64(s.min)
	}
	if k >= s.n-1 {
		return float64(s.max)
	}
	if k < s.negative {
		return float64(s.min) // negative values are rare and not resolved
	}
	var seen uint64
	for i, c := range s.counts {
		if c == 0 {
			continue
		}
		if k < seen+c {
			lo, w := bucketBounds(i)
			if i < subBuckets {
				return lo // whole nanoseconds: the bucket holds exactly lo
			}
			v := lo + w*(float64(k-seen)+0.5)/float64(c)
			return math.Min(math.Max(v, float64(s.min)), float64(s.max))
		}
		seen += c
	}
	return float64(s.max)
}

// OrderStat is the k-th smallest value (0-based, k < N) in seconds, as
// Quantile reads it: within RelativeError of the exact one. The
// confidence interval of a quantile is a pair of these.
func (s *Sketch) OrderStat(k int) float64 {
	if s.n == 0 || k < 0 {
		return 0
	}
	return s.orderStat(uint64(k)) / 1e9
}

// Quantile is the p-quantile (0 ≤ p ≤ 1) in seconds, placed as gonum's
// stat.LinInterp places it among sorted values: within RelativeError of
// the exact quantile. 0 when empty.
func (s *Sketch) Quantile(p float64) float64 {
	if s.n == 0 {
		return 0
	}
	fidx := p * float64(s.n)
	k := max(int64(math.Ceil(fidx))-1, 0)
	if k == 0 {
		return float64(s.min) / 1e9
	}
	t := float64(k+1) - fidx
	return (t*s.orderStat(uint64(k-1)) + (1-t)*s.orderStat(uint64(k))) / 1e9
}

// AtOrBelow estimates how many values are at or below x seconds: exact for
// the buckets wholly below x, the bucket holding x split in proportion.
func (s *Sketch) AtOrBelow(x float64) float64 {
	if s.n == 0 {
		return 0
	}
	ns := x * 1e9
	if ns >= float64(s.max) {
		return float64(s.n)
	}
	if ns < float64(s.min) {
		return 0
	}
	total := 0.0
	for i, c := range s.counts {
		if c == 0 {
			continue
		}
		lo, w := bucketBounds(i)
		if i < subBuckets {
			// Integer nanoseconds: the bucket holds exactly lo.
			if lo <= ns {
				total += float64(c)
			}
			continue
		}
		switch {
		case lo+w <= ns:
			total += float64(c)
		case lo <= ns:
			total += float64(c) * (ns - lo) / w
		}
	}
	return total
}

// Representative returns m values (seconds, ascending) whose empirical
// distribution follows the sketch's: its order statistics at evenly spaced
// ranks (the exact min first and the exact max last), read in one walk
// over the buckets. For comparing and drawing a CDF.
func (s *Sketch) Representative(m int) []float64 {
	if s.n == 0 || m <= 0 {
		return nil
	}
	if uint64(m) > s.n {
		m = int(s.n)
	}
	out := make([]float64, m)
	i := 0
	rank := func(i int) uint64 {
		if m == 1 {
			return s.n - 1
		}
		return uint64(math.Round(float64(i) * float64(s.n-1) / float64(m-1)))
	}
	// The first and the last rank, and the negative values, are the exact
	// extremes (as orderStat reads them).
	for i < m && (rank(i) == 0 || rank(i) < s.negative) {
		out[i] = float64(s.min) / 1e9
		i++
	}
	var seen uint64
	for b, c := range s.counts {
		if c == 0 {
			continue
		}
		lo, w := bucketBounds(b)
		for i < m && rank(i) < seen+c && rank(i) < s.n-1 {
			v := lo
			if b >= subBuckets {
				v = lo + w*(float64(rank(i)-seen)+0.5)/float64(c)
			}
			out[i] = math.Min(math.Max(v, float64(s.min)), float64(s.max)) / 1e9
			i++
		}
		seen += c
	}
	for ; i < m; i++ {
		out[i] = float64(s.max) / 1e9
	}
	return out
}
