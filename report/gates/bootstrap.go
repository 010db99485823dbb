package gates

import (
	"math"
	"sort"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
)

// Bootstrap configures the confidence interval of a regression gate.
type Bootstrap struct {
	Resamples  int     // resamples of each run; 2000 when 0
	Confidence float64 // two-sided level of the interval; 0.95 when outside (0, 1)
	Seed       uint64  // the same seed and records always give the same interval
}

// DefaultBootstrap is what Evaluate uses.
var DefaultBootstrap = Bootstrap{Resamples: 2000, Confidence: 0.95, Seed: 1}

func (b Bootstrap) withDefaults() Bootstrap {
	if b.Resamples <= 0 {
		b.Resamples = DefaultBootstrap.Resamples
	}
	if !(b.Confidence > 0 && b.Confidence < 1) {
		b.Confidence = DefaultBootstrap.Confidence
	}
	return b
}

// minClusters is the fewest requests a run must contribute for a bootstrap
// interval: with fewer, resampling says nothing and the gate falls back on
// the point estimate.
const minClusters = 2

// samples are one run's raw values of a family, sorted, each tagged with the
// request (cluster) it came from. The bootstrap resamples requests, not
// values: a request's ITLs share its batch and its stalls, so treating them
// as independent would make the interval too narrow.
type samples struct {
	values  []float64 // ascending
	cluster []int32   // values[i] came from request cluster[i]
	sizes   []int     // values per request
}

// samplesOf extracts a family's values from records, as report.Build counts
// them: latencies from successful requests, health distributions from every
// request of the measured phases.
func samplesOf(records []client.Record, fam family) samples {
	type tagged struct {
		v float64
		c int32
	}
	var all []tagged
	var sizes []int
	var itl []time.Duration
	for i := range records {
		r := &records[i]
		before := len(all)
		push := func(v float64) { all = append(all, tagged{v, int32(len(sizes))}) }
		switch fam {
		case ttftSamples:
			if d, ok := r.TTFT(); ok && r.OK() {
				push(d.Seconds())
			}
		case ttfcSamples:
			if d, ok := r.TTFC(); ok && r.OK() {
				push(d.Seconds())
			}
		case tpotSamples:
			if d, ok := r.TPOT(); ok && r.OK() {
				push(d.Seconds())
			}
		case e2eSamples:
			if r.OK() {
				push(r.E2E().Seconds())
			}
		case itlSamples:
			if r.OK() {
				itl = r.ITLs(itl[:0])
				for _, d := range itl {
					push(d.Seconds())
				}
			}
		case lagSamples:
			if r.Scheduled() {
				push(max(0, r.ScheduleLag()).Seconds())
			}
		case connSamples:
			if r.ConnectDur > 0 {
				push(r.ConnectDur.Seconds())
			}
		case sendSamples:
			push(r.SendDelay().Seconds())
		}
		if n := len(all) - before; n > 0 {
			sizes = append(sizes, n)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	s := samples{values: make([]float64, len(all)), cluster: make([]int32, len(all)), sizes: sizes}
	for i, t := range all {
		s.values[i], s.cluster[i] = t.v, t.c
	}
	return s
}

// itlSamplesOf are the ITL samples of sampled requests, each request a
// cluster, as samplesOf makes them of records.
func itlSamplesOf(sampled []chunkdigest.Sampled) samples {
	type tagged struct {
		v float64
		c int32
	}
	var all []tagged
	var sizes []int
	for _, x := range sampled {
		if len(x.ITLs) == 0 {
			continue
		}
		for _, d := range x.ITLs {
			all = append(all, tagged{d.Seconds(), int32(len(sizes))})
		}
		sizes = append(sizes, len(x.ITLs))
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v < all[j].v })
	s := samples{values: make([]float64, len(all)), cluster: make([]int32, len(all)), sizes: sizes}
	for i, t := range all {
		s.values[i], s.cluster[i] = t.v, t.c
	}
	return s
}

// count is how many values a resample holds.
func (s samples) count(weight []int) int {
	n := 0
	for c, k := range s.sizes {
		n += k * weight[c]
	}
	return n
}

// statistic computes a metric's statistic over the samples with each
// request counted weight[c] times (all ones: the run itself). Quantiles are
// gonum's stat.LinInterp over the values repeated by their weights, so with
// unit weights they equal the summary's. It walks every value; estimator is
// the fast path for many resamples.
func (s samples) statistic(p float64, mean bool, weight []int) float64 {
	n := s.count(weight)
	if n == 0 {
		return math.NaN()
	}
	if mean {
		sum := 0.0
		for i, v := range s.values {
			sum += v * float64(weight[s.cluster[i]])
		}
		return sum / float64(n)
	}
	fidx, k := position(p, n)
	prev, at, _ := s.find(k, weight, 0, len(s.values), 0)
	return s.interpolate(fidx, k, prev, at)
}

// position is where stat.LinInterp looks in n sorted values: the first
// index k with k+1 >= p·n, interpolated with the one before it.
func position(p float64, n int) (fidx float64, k int) {
	fidx = p * float64(n)
	return fidx, max(int(math.Ceil(fidx))-1, 0)
}

func (s samples) interpolate(fidx float64, k, prev, at int) float64 {
	if k == 0 {
		return s.values[at]
	}
	t := float64(k+1) - fidx
	return t*s.values[prev] + (1-t)*s.values[at]
}

// find walks values[from:to], seen resampled values lying before from, to
// the indices of the values at resampled positions k-1 (prev) and k (at).
// ok is false when they are not both inside the range.
func (s samples) find(k int, weight []int, from, to, seen int) (prev, at int, ok bool) {
	prevFound := k == 0
	if k > 0 && k-1 < seen {
		return 0, 0, false
	}
	for i := from; i < to; i++ {
		w := weight[s.cluster[i]]
		if w == 0 {
			continue
		}
		if !prevFound && k-1 < seen+w {
			prev, prevFound = i, true
		}
		if k < seen+w {
			return prev, i, prevFound
		}
		seen += w
	}
	return 0, 0, false
}

// pilotResamples are the first resamples of a quantile, walked in full to
// learn where in the sorted values resampled quantiles land.
const pilotResamples = 50

// estimator computes one run's statistic for each resample. A mean costs
// one pass over the requests. A quantile walks only a window of the sorted
// values around where the pilot resamples found it (three times as wide),
// the values before the window counted per request; a resample whose
// quantile falls outside the window is walked in full, so the result is
// always exact and only the speed depends on the window.
type estimator struct {
	s      samples
	p      float64
	mean   bool
	sums   []float64 // per request, for the mean
	calls  int
	lowest int // the pilot's smallest and largest index
	top    int
	lo, hi int   // the window, once the pilot is over
	below  []int // per request: values before lo
}

func newEstimator(s samples, m metric) *estimator {
	e := &estimator{s: s, p: m.p, mean: m.stat == "mean", lowest: len(s.values)}
	if e.mean {
		e.sums = make([]float64, len(s.sizes))
		for i, v := range s.values {
			e.sums[s.cluster[i]] += v
		}
	}
	return e
}

func (e *estimator) estimate(weight []int) float64 {
	n := e.s.count(weight)
	if e.mean {
		sum := 0.0
		for c, w := range weight {
			sum += float64(w) * e.sums[c]
		}
		return sum / float64(n)
	}
	fidx, k := position(e.p, n)
	e.calls++
	if e.below != nil {
		seen := 0
		for c, w := range weight {
			seen += w * e.below[c]
		}
		if prev, at, ok := e.s.find(k, weight, e.lo, e.hi, seen); ok {
			return e.s.interpolate(fidx, k, prev, at)
		}
	}
	prev, at, _ := e.s.find(k, weight, 0, len(e.s.values), 0)
	if e.below == nil {
		e.lowest, e.top = min(e.lowest, prev, at), max(e.top, at)
		if e.calls == pilotResamples {
			e.window()
		}
	}
	return e.s.interpolate(fidx, k, prev, at)
}

func (e *estimator) window() {
	span := e.top - e.lowest + 16
	e.lo, e.hi = max(0, e.lowest-span), min(len(e.s.values), e.top+span+1)
	e.below = make([]int, len(e.s.sizes))
	for _, c := range e.s.cluster[:e.lo] {
		e.below[c]++
	}
}

// percentile is stat.LinInterp's quantile of sorted xs, safe with infinite
// values (which a zero baseline produces): equal neighbours are not mixed.
func percentile(xs []float64, p float64) float64 {
	fidx := p * float64(len(xs))
	k := max(int(math.Ceil(fidx))-1, 0)
	t := float64(k+1) - fidx
	if k == 0 || t == 0 || xs[k-1] == xs[k] {
		return xs[k]
	}
	return t*xs[k-1] + (1-t)*xs[k]
}

// regression is how much worse cur is than base, as a fraction of base:
// positive when worse. From a zero baseline, any worsening is infinite.
func regression(cur, base float64, better direction) float64 {
	d := cur - base
	if better == higher {
		d = -d
	}
	if base == 0 {
		switch {
		case d > 0:
			return math.Inf(1)
		case d < 0:
			return math.Inf(-1)
		}
		return 0
	}
	return d / math.Abs(base)
}
