package report

import (
	"math"
	"slices"
	"sync"
	"time"
	"unsafe"
)

// A large run's summary sorts millions of latencies (each of TTFT, TPOT,
// E2E, ... over the run and over each phase): a radix sort does it in a
// few linear passes where a comparison sort makes twenty. The order is the
// one sort.Float64s gives, so every quantile, mean (summed in that order)
// and max is the same to the bit.

// radixMin is the length below which a comparison sort is as quick.
const radixMin = 512

// scratchPool holds the radix sort's second buffer between sorts.
var scratchPool sync.Pool

// sortFloats sorts xs ascending, as sort.Float64s does. Values sort by
// their bits (sign flipped, or every bit for a negative value); NaN and −0,
// which sort.Float64s orders otherwise (NaN first, −0 equal to 0), never
// come from durations: with either, xs is sorted by comparison.
func sortFloats(xs []float64) {
	if len(xs) < radixMin {
		slices.Sort(xs)
		return
	}
	keys := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(xs))), len(xs))
	for i, x := range xs {
		if x != x || (x == 0 && math.Signbit(x)) {
			for j := range keys[:i] { // undo the keys made so far
				keys[j] = fromKey(keys[j])
			}
			slices.Sort(xs)
			return
		}
		keys[i] = toKey(math.Float64bits(x))
	}
	radixSort(keys)
	for i, k := range keys {
		keys[i] = fromKey(k)
	}
}

// toKey maps a float64's bits to a key whose unsigned order is the
// float's; fromKey undoes it.
func toKey(b uint64) uint64 {
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

func fromKey(k uint64) uint64 {
	if k>>63 == 0 {
		return ^k
	}
	return k &^ (1 << 63)
}

// sortDurations sorts ds ascending.
func sortDurations(ds []time.Duration) {
	if len(ds) < radixMin {
		slices.Sort(ds)
		return
	}
	keys := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(ds))), len(ds))
	for i := range keys {
		keys[i] ^= 1 << 63 // signed order as unsigned
	}
	radixSort(keys)
	for i := range keys {
		keys[i] ^= 1 << 63
	}
}

// radixSort sorts keys ascending: least significant byte first, one
// counting pass for all eight bytes, and the bytes every key shares
// skipped.
func radixSort(keys []uint64) {
	var counts [8][256]int
	for _, k := range keys {
		for d := range 8 {
			counts[d][byte(k>>(8*d))]++
		}
	}
	var buf []uint64
	if p, ok := scratchPool.Get().(*[]uint64); ok && cap(*p) >= len(keys) {
		buf = (*p)[:len(keys)]
	} else {
		buf = make([]uint64, len(keys))
	}
	src, dst := keys, buf
	for d := range 8 {
		c := &counts[d]
		if c[byte(src[0]>>(8*d))] == len(src) {
			continue // every key has this byte
		}
		var at [256]int
		sum := 0
		for i, n := range c {
			at[i] = sum
			sum += n
		}
		shift := uint(8 * d)
		for _, k := range src {
			b := byte(k >> shift)
			dst[at[b]] = k
			at[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
	scratchPool.Put(&buf)
}
