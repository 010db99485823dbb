package chunkdigest

import (
	"cmp"
	"container/heap"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// Request is what the reports keep of one record's chunks once they are
// dropped: a few numbers, exact.
type Request struct {
	// Chunks is how many output chunks the record had.
	Chunks int32
	// ITLs is how many per-token inter-token latencies it gave
	// (client.Record.ITLs): the tokens of every chunk after the first, at
	// least one each.
	ITLs int32
	// First and Last are the arrivals of its first and last chunk (0
	// without chunks).
	First, Last time.Duration
}

// Of digests one record's chunks.
func Of(r *client.Record) Request {
	d := Request{Chunks: int32(len(r.Chunks))}
	if len(r.Chunks) == 0 {
		return d
	}
	d.First, d.Last = r.Chunks[0].At, r.Chunks[len(r.Chunks)-1].At
	if r.Choices > 1 {
		d.ITLs = itlCount(r)
		return d
	}
	for _, ch := range r.Chunks[1:] {
		d.ITLs += max(ch.Tokens, 1)
	}
	return d
}

// Span is a stretch (From, To] of the run clock: a record whose end falls
// in one of the digest's spans has its ITLs kept apart (InSpans), for the
// reconciliation with the engine, which counts requests by finish time.
type Span struct{ From, To time.Duration }

// Phase is what the chunks of one phase's records add up to.
type Phase struct {
	// ITL holds the per-token ITLs of the phase's successful requests.
	ITL Sketch
	// Arrivals are the output tokens of every request by chunk arrival.
	Arrivals Bins
	// Sample is a deterministic sample of the successful requests with
	// their ITLs, for the gates' bootstrap.
	Sample Reservoir
}

// Digest is what a run's chunks add up to, per phase and over the spans;
// digests of parts of a run merge into the digest of the whole.
type Digest struct {
	Phases map[string]*Phase
	Spans  []Span
	// InSpans are the successful requests that ended inside a span: ITL
	// per token, and Gaps per chunk (the time between consecutive
	// chunks, whatever they carried).
	InSpans struct{ ITL, Gaps Sketch }
	// bounds, when set (NewWithin), are shared with the digest this one
	// will be merged into.
	bounds *Bounds
	// gaps is Add's scratch: one request's one-token ITLs.
	gaps []time.Duration
	// itls holds the ITLs of the requests the samples of a digest made by
	// NewWithin take: Reset reuses it, Absorb copies out of it.
	itls []time.Duration
	// itlsTaken counts the ITLs taken since Reset, itlsLast those of the
	// part before.
	itlsTaken, itlsLast int
}

// New is an empty digest that keeps ITLs apart for the given spans.
func New(spans []Span) *Digest {
	return &Digest{Phases: map[string]*Phase{}, Spans: slices.Clone(spans)}
}

// NewWithin is New for a digest of one part of a run whose parts are
// merged into one digest (Absorb) as they are done, and which is Reset for
// the next part: its Samples take no request that the merged digest's
// Samples, as bounds last heard of them, would refuse. Without it, every
// part's Sample would keep the ITLs of its first SampleSize requests only to
// drop them at the merge (a million-request run read in 4 MB parts copies
// every ITL of the run that way). The ITLs its Samples take are kept in one
// buffer of the digest's, which Reset reuses.
func NewWithin(spans []Span, bounds *Bounds) *Digest {
	d := New(spans)
	d.bounds = bounds
	return d
}

func (d *Digest) phase(name string) *Phase {
	p := d.Phases[name]
	if p == nil {
		p = &Phase{}
		if d.bounds != nil {
			p.Sample.bound = d.bounds.of(name)
		}
		d.Phases[name] = p
	}
	return p
}

// Bounds are, per phase, the key from which the Sample of a run's merged
// parts refuses requests. They only ever fall: a key refused once is
// refused by the final Sample too, which keeps the SampleSize smallest keys.
type Bounds struct {
	mu     sync.Mutex
	phases map[string]*atomic.Uint64
}

// NewBounds is bounds that refuse nothing yet.
func NewBounds() *Bounds { return &Bounds{phases: map[string]*atomic.Uint64{}} }

func (b *Bounds) of(phase string) *atomic.Uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	v := b.phases[phase]
	if v == nil {
		v = &atomic.Uint64{}
		v.Store(math.MaxUint64)
		b.phases[phase] = v
	}
	return v
}

// Publish lowers the bounds to what merged's full Samples refuse.
func (b *Bounds) Publish(merged *Digest) {
	for name, p := range merged.Phases {
		if len(p.Sample.h) == SampleSize {
			b.of(name).Store(p.Sample.h[0].Key)
		}
	}
}

// Add digests a record's chunks into d and returns what the record keeps
// of them (what Of says).
func (d *Digest) Add(r *client.Record) Request {
	chunks := r.Chunks
	req := Request{Chunks: int32(len(chunks))}
	if len(chunks) == 0 {
		return req
	}
	req.First, req.Last = chunks[0].At, chunks[len(chunks)-1].At
	p := d.phase(r.Phase)
	withITL := r.OK() && len(chunks) >= 2
	if r.Choices > 1 {
		return d.addChoices(r, req, p, withITL)
	}
	// This loop runs once per chunk of the whole run (hundreds of millions
	// in a large one): the arrivals' bins are widened once to the first and
	// the last chunk's, and each chunk's found by its index; the one-token
	// gaps are gathered and added to the sketch in one tight loop.
	b := &p.Arrivals
	b.addBin(binOf(req.First), 0)
	b.addBin(binOf(req.Last), 0)
	tokens, start := b.tokens, b.start
	gaps := d.gaps[:0]
	prev := req.First
	for i, ch := range chunks {
		n := max(ch.Tokens, 1)
		if j := uint64(binOf(ch.At) - start); j < uint64(len(tokens)) {
			tokens[j] += int64(n)
		} else { // a chunk before the first or after the last
			b.addBin(binOf(ch.At), int64(n))
			tokens, start = b.tokens, b.start
		}
		if i == 0 {
			continue
		}
		req.ITLs += n
		gap := ch.At - prev
		prev = ch.At
		if !withITL {
			continue
		}
		if k := ch.Tokens; k > 1 {
			p.ITL.AddN(gap/time.Duration(k), uint64(k))
		} else {
			gaps = append(gaps, gap)
		}
	}
	p.ITL.addAll(gaps)
	d.gaps = gaps
	if !withITL {
		return req
	}
	for _, s := range d.Spans {
		if r.End > s.From && r.End <= s.To {
			d.addInSpans(chunks)
			break
		}
	}
	// The ITLs are kept only for a request the sample takes.
	if key := SampleKey(r); p.Sample.Takes(key) {
		p.Sample.Offer(key, d.itlsOf(chunks, req.ITLs))
	}
	return req
}

// addInSpans adds a successful request's ITLs and chunk gaps to InSpans.
func (d *Digest) addInSpans(chunks []client.Chunk) {
	for i := 1; i < len(chunks); i++ {
		gap := chunks[i].At - chunks[i-1].At
		if k := chunks[i].Tokens; k > 1 {
			d.InSpans.ITL.AddN(gap/time.Duration(k), uint64(k))
		} else {
			d.InSpans.ITL.Add(gap)
		}
		d.InSpans.Gaps.Add(gap)
	}
}

// itlsOf are the per-token ITLs of chunks (n of them): each chunk's gap
// spread over its tokens. A part's digest (NewWithin) keeps them in its
// buffer (a new one when it is full: what was taken from the old stays).
func (d *Digest) itlsOf(chunks []client.Chunk, n int32) []time.Duration {
	itls := d.itlsBuffer(int(n))
	for i := 1; i < len(chunks); i++ {
		gap := chunks[i].At - chunks[i-1].At
		if k := chunks[i].Tokens; k > 1 {
			for range k {
				itls = append(itls, gap/time.Duration(k))
			}
		} else {
			itls = append(itls, gap)
		}
	}
	if d.bounds != nil {
		d.itls = d.itls[:len(d.itls)+len(itls)]
		d.itlsTaken += len(itls)
	}
	return itls
}

// itlsBuffer is room for n ITLs: in the digest's buffer for a part's
// digest, else a new array.
func (d *Digest) itlsBuffer(n int) []time.Duration {
	if d.bounds == nil {
		return make([]time.Duration, 0, n)
	}
	if cap(d.itls)-len(d.itls) < n {
		// As large as the last part needed, so that a part like it takes
		// one buffer: the buffer grows to what the parts take, once.
		d.itls = make([]time.Duration, 0, max(64<<10, n, d.itlsLast))
	}
	return d.itls[len(d.itls):len(d.itls):cap(d.itls)]
}

// Absorb is Merge for a part made by NewWithin, which is then Reset: the
// ITLs d's Samples take from it are copied (into the buffers of requests
// they drop, when they have one), so d holds nothing of o's.
func (d *Digest) Absorb(o *Digest) {
	d.merge(o, true)
}

// Reset empties d for the next part of the run (NewWithin), keeping its
// arrays: the ITLs its Samples took are overwritten, so d must have been
// merged with Absorb.
func (d *Digest) Reset() {
	for _, p := range d.Phases {
		p.ITL.reset()
		p.Arrivals = Bins{tokens: p.Arrivals.tokens[:0]}
		clear(p.Sample.h)
		p.Sample.h = p.Sample.h[:0]
	}
	d.InSpans.ITL.reset()
	d.InSpans.Gaps.reset()
	d.itls = d.itls[:0]
	d.itlsLast, d.itlsTaken = d.itlsTaken, 0
}

// Merge adds o into d (o's spans must be d's).
func (d *Digest) Merge(o *Digest) { d.merge(o, false) }

func (d *Digest) merge(o *Digest, copyITLs bool) {
	for _, name := range slices.Sorted(maps.Keys(o.Phases)) {
		op, p := o.Phases[name], d.phase(name)
		p.ITL.Merge(&op.ITL)
		p.Arrivals.Merge(&op.Arrivals)
		if copyITLs {
			p.Sample.absorb(&op.Sample)
		} else {
			p.Sample.Merge(&op.Sample)
		}
	}
	d.InSpans.ITL.Merge(&o.InSpans.ITL)
	d.InSpans.Gaps.Merge(&o.InSpans.Gaps)
}

// Of phases merges the named phases' digests (every phase when keep is
// nil) into one.
func (d *Digest) Of(keep func(phase string) bool) *Phase {
	out := &Phase{}
	for _, name := range slices.Sorted(maps.Keys(d.Phases)) {
		if keep != nil && !keep(name) {
			continue
		}
		p := d.Phases[name]
		out.ITL.Merge(&p.ITL)
		out.Arrivals.Merge(&p.Arrivals)
		out.Sample.Merge(&p.Sample)
	}
	return out
}

// Only is a digest of the phases keep keeps (sharing their digests with d),
// without d's spans.
func (d *Digest) Only(keep func(phase string) bool) *Digest {
	out := New(nil)
	for name, p := range d.Phases {
		if keep(name) {
			out.Phases[name] = p
		}
	}
	return out
}

// AddN records the value d n times.
func (s *Sketch) AddN(d time.Duration, n uint64) {
	if n == 1 {
		s.Add(d)
		return
	}
	if n == 0 {
		return
	}
	if s.n == 0 || d < s.min {
		s.min = d
	}
	if s.n == 0 || d > s.max {
		s.max = d
	}
	s.n += n
	s.sum += int64(d) * int64(n)
	a := d
	if a < 0 {
		a = -a
		s.negative += n
	}
	// n·d² in 128 bits: d² = hi·2⁶⁴ + lo, times n.
	hi, lo := bits.Mul64(uint64(a), uint64(a))
	h1, l1 := bits.Mul64(lo, n)
	var carry uint64
	s.sqLo, carry = bits.Add64(s.sqLo, l1, 0)
	s.sqHi += hi*n + h1 + carry
	i := 0
	if d > 0 {
		i = bucketOf(uint64(d))
	}
	if i >= len(s.counts) {
		s.counts = append(s.counts, make([]uint64, i+1-len(s.counts))...)
	}
	s.counts[i] += n
}

// BinWidth is the resolution of token arrivals: every chart and peak reads
// whole seconds or more, and a scrape interval is read to within it.
const BinWidth = 10 * time.Millisecond

// Bins count output tokens by arrival in BinWidth bins of the run clock.
type Bins struct {
	start  int64 // bin index of tokens[0]
	tokens []int64
}

func binOf(at time.Duration) int64 {
	b := int64(at / BinWidth)
	if at < 0 && at%BinWidth != 0 {
		b-- // floor
	}
	return b
}

// Add counts n tokens arriving at at.
func (b *Bins) Add(at time.Duration, n int64) { b.addBin(binOf(at), n) }

func (b *Bins) addBin(i int64, n int64) {
	if len(b.tokens) == 0 {
		b.start = i
		b.tokens = append(b.tokens, n)
		return
	}
	if i < b.start {
		grow := b.start - i
		b.tokens = append(make([]int64, grow, grow+int64(len(b.tokens))), b.tokens...)
		b.start = i
	}
	j := i - b.start
	if j >= int64(len(b.tokens)) {
		b.tokens = append(b.tokens, make([]int64, j+1-int64(len(b.tokens)))...)
	}
	b.tokens[j] += n
}

// Merge adds o's tokens to b.
func (b *Bins) Merge(o *Bins) {
	if len(o.tokens) == 0 {
		return
	}
	// Widen once to cover both, then add.
	b.addBin(o.start, 0)
	b.addBin(o.start+int64(len(o.tokens))-1, 0)
	off := o.start - b.start
	for i, n := range o.tokens {
		b.tokens[off+int64(i)] += n
	}
}

// Each calls fn with every non-empty bin: its start on the run clock and
// its tokens, in time order.
func (b *Bins) Each(fn func(at time.Duration, tokens int64)) {
	for i, n := range b.tokens {
		if n != 0 {
			fn(time.Duration(b.start+int64(i))*BinWidth, n)
		}
	}
}

// Total is every token counted.
func (b *Bins) Total() int64 {
	var t int64
	for _, n := range b.tokens {
		t += n
	}
	return t
}

// SampleSize is how many successful requests a phase's Sample keeps.
const SampleSize = 4096

// Sampled is one request of a Sample: its key and its per-token ITLs.
type Sampled struct {
	Key  uint64
	ITLs []time.Duration
}

// Reservoir keeps the SampleSize requests of smallest key: which requests
// it holds depends on the requests only, not on the order they came in or
// on how the run was split among readers, and the union of two reservoirs
// cut to size is the reservoir of the union.
type Reservoir struct {
	h sampleHeap
	// bound, when set, is the key from which a merged Sample this one will
	// join refuses requests (Bounds).
	bound *atomic.Uint64
}

// SampleKey is a request's hash (FNV-1a of its id and plan index): a
// deterministic and evenly spread order for sampling.
func SampleKey(r *client.Record) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037) // FNV-1a, written out: no allocation per request
	for i := 0; i < len(r.ID); i++ {
		h = (h ^ uint64(r.ID[i])) * prime
	}
	h *= prime // the 0 byte between id and index
	var buf [20]byte
	for _, c := range strconv.AppendInt(buf[:0], int64(r.Index), 10) {
		h = (h ^ uint64(c)) * prime
	}
	return h
}

// Takes reports whether a request of this key would be kept now.
func (s *Reservoir) Takes(key uint64) bool {
	if s.bound != nil && key >= s.bound.Load() {
		return false
	}
	return len(s.h) < SampleSize || key < s.h[0].Key
}

// Offer keeps the request when its key is among the smallest.
func (s *Reservoir) Offer(key uint64, itls []time.Duration) {
	if len(s.h) < SampleSize {
		heap.Push(&s.h, Sampled{key, itls})
		return
	}
	if key < s.h[0].Key {
		s.h[0] = Sampled{key, itls}
		heap.Fix(&s.h, 0)
	}
}

// Merge offers o's requests to s.
func (s *Reservoir) Merge(o *Reservoir) {
	for _, x := range o.h {
		s.Offer(x.Key, x.ITLs)
	}
}

// absorb offers o's requests to s with copies of their ITLs, in the
// buffers of the requests s drops: every ITLs s holds is its own.
func (s *Reservoir) absorb(o *Reservoir) {
	for _, x := range o.h {
		switch {
		case len(s.h) < SampleSize:
			heap.Push(&s.h, Sampled{x.Key, slices.Clone(x.ITLs)})
		case x.Key < s.h[0].Key:
			s.h[0] = Sampled{x.Key, append(s.h[0].ITLs[:0], x.ITLs...)}
			heap.Fix(&s.h, 0)
		}
	}
}

// Requests are the sampled requests by key.
func (s *Reservoir) Requests() []Sampled {
	out := slices.Clone([]Sampled(s.h))
	slices.SortFunc(out, func(a, b Sampled) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// sampleHeap is a max-heap on Key: its top is the first to leave.
type sampleHeap []Sampled

func (h sampleHeap) Len() int           { return len(h) }
func (h sampleHeap) Less(i, j int) bool { return h[i].Key > h[j].Key }
func (h sampleHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sampleHeap) Push(x any)        { *h = append(*h, x.(Sampled)) }
func (h *sampleHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
