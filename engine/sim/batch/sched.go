package batch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Finish reasons, as OpenAI reports them.
const (
	FinishStop   = "stop"   // natural end (EOS)
	FinishLength = "length" // max_tokens or the context window reached
	FinishAbort  = "abort"  // the client went away or the engine stopped
)

type seqState uint8

const (
	stateNew seqState = iota
	stateWaiting
	stateRunning
	stateFinished
)

// Seq is one request inside the scheduler. The caller fills the exported
// input fields before Add and reads the exported outcome fields and accessor
// methods after each Complete. Only the goroutine that drives the Scheduler
// may touch a Seq once it was added.
type Seq struct {
	// Inputs.
	ID        string
	PromptLen int
	// PrefixHashes are the chain hashes of the prompt's full KV blocks
	// (PrefixHashes[i] covers tokens [0, (i+1)·KVBlockSize)); see Hasher.
	PrefixHashes []uint64
	MaxTokens    int // generated tokens at most (already capped by the context window)
	MinTokens    int // EOS is suppressed before this many tokens
	IgnoreEOS    bool
	Owner        any // the caller's handle, untouched

	// Outcome.
	Output       int    // tokens generated so far
	CachedTokens int    // prefix-cache hit tokens at the first admission
	Preemptions  int    // times retracted back to the waiting queue
	FinishReason string // "" while unfinished

	state     seqState
	natural   int // natural length (EOS point); 0 = never
	target    int // tokens to prefill at this admission: prompt + output so far
	computed  int // tokens whose KV is computed
	kv        []int32
	hits      int  // prefix-cache hit blocks at this admission
	admitted  bool // has been admitted at least once
	prefilled bool // finished its first prefill
	chunk     int  // prefill tokens computed in the current pass
	emit      int  // tokens emitted at the end of the current pass
}

// StepPrefill is the number of prompt tokens the current pass computes for it.
func (q *Seq) StepPrefill() int { return q.chunk }

// StepEmitted is the number of tokens the current pass emitted for it
// (valid after Complete; the first token when its prefill ended).
func (q *Seq) StepEmitted() int { return q.emit }

// Finished reports whether the sequence is done.
func (q *Seq) Finished() bool { return q.state == stateFinished }

// Batch is one forward pass: formed by Schedule, applied by Complete. It is
// reused by the next Schedule, so callers copy what they keep.
type Batch struct {
	Seqs      []*Seq // sequences in the pass, in admission order
	Admitted  []*Seq // left the waiting queue at this pass (first admission or after a preemption)
	Preempted []*Seq // retracted to the waiting queue while forming this pass
	Finished  []*Seq // finished at the end of the pass (set by Complete)

	RunningBefore int // running sequences before this pass admitted new ones
	PrefillTokens int // uncached prompt tokens computed in the pass
	HitTokens     int // prefix-cache hit tokens of the sequences admitted at this pass
	NewTokens     int // prompt tokens of the admitted sequences that were not hits
	DecodeSeqs    int // sequences decoding in the pass
	DecodeTokens  int // tokens emitted by decoding sequences (set by Complete)
	PrefillDone   int // sequences whose prefill ended in the pass (each emits one token)
	KVReadTokens  int // KV tokens read by the decoding sequences' attention
	DraftTokens   int // speculative draft tokens proposed in the pass
	Duration      time.Duration
}

func (b *Batch) reset() {
	*b = Batch{Seqs: b.Seqs[:0], Admitted: b.Admitted[:0], Preempted: b.Preempted[:0], Finished: b.Finished[:0]}
}

// Scheduler is the continuous-batching model. It is not safe for concurrent use.
type Scheduler struct {
	p        Params
	kv       *kvPool
	waiting  deque
	running  []*Seq
	rng      *rand.Rand
	batch    Batch
	inFlight bool

	prefixQueries, prefixHits int64
}

// New returns a scheduler for validated params.
func New(p Params) (*Scheduler, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("batch params: %w", err)
	}
	seed := uint64(p.Seed)
	return &Scheduler{
		p:   p,
		kv:  newKVPool(p.KVBlocks),
		rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
	}, nil
}

// Params returns the model's parameters.
func (s *Scheduler) Params() Params { return s.p }

// Add puts a new sequence at the back of the waiting queue.
func (s *Scheduler) Add(q *Seq) {
	if q.state != stateNew {
		panic("batch: Seq added twice")
	}
	if q.MaxTokens < 0 {
		q.MaxTokens = 0
	}
	if !q.IgnoreEOS {
		q.natural = NaturalLength(s.p.Seed, q.ID, s.p.EOSMeanTokens)
	}
	q.target = q.PromptLen
	q.state = stateWaiting
	s.waiting.pushBack(q)
}

// Abort removes a sequence wherever it is and frees its KV blocks. It must
// not be called between Schedule and Complete for a sequence in the batch;
// call it before Schedule or after Complete.
func (s *Scheduler) Abort(q *Seq) {
	switch q.state {
	case stateWaiting:
		s.waiting.remove(q)
	case stateRunning:
		s.releaseKV(q)
		s.running = removeSeq(s.running, q)
	default:
		return
	}
	q.state = stateFinished
	q.FinishReason = FinishAbort
}

// Waiting is the number of queued sequences.
func (s *Scheduler) Waiting() int { return s.waiting.len() }

// Running is the number of sequences in the running batch.
func (s *Scheduler) Running() int { return len(s.running) }

// KVUsedTokens is the KV capacity held by running sequences, in tokens
// (whole blocks; evictable cached prefixes count as free).
func (s *Scheduler) KVUsedTokens() int { return s.kv.used * s.p.KVBlockSize }

// KVUsedBlocks is the number of blocks held by running sequences.
func (s *Scheduler) KVUsedBlocks() int { return s.kv.used }

// KVFreeBlocks is the number of blocks that are neither used nor cached.
func (s *Scheduler) KVFreeBlocks() int { return len(s.kv.free) }

// KVEvictableBlocks is the number of unreferenced blocks holding cached prefixes.
func (s *Scheduler) KVEvictableBlocks() int { return s.kv.evictable }

// KVUsage is the used fraction of the KV cache, 0–1.
func (s *Scheduler) KVUsage() float64 { return float64(s.kv.used) / float64(s.kv.capacity()) }

// PrefixCounters are the prefix-cache queries and hits in tokens so far
// (first admissions only, as vLLM counts them).
func (s *Scheduler) PrefixCounters() (queries, hits int64) { return s.prefixQueries, s.prefixHits }

// DecodeContextTokens is Σ context length over running sequences that have
// finished prefill (SGLang's decode_sum_seq_lens).
func (s *Scheduler) DecodeContextTokens() int {
	n := 0
	for _, q := range s.running {
		if q.computed >= q.target {
			n += q.computed
		}
	}
	return n
}

// Schedule forms the next forward pass: decoding sequences first (preempting
// the newest running sequences when KV runs out), then chunked prefill of
// admitted sequences, then FCFS admission from the waiting queue while the
// running cap, the prefill budget and free KV allow. It returns nil when there
// is nothing to run.
func (s *Scheduler) Schedule() *Batch {
	if s.inFlight {
		panic("batch: Schedule called twice without Complete")
	}
	b := &s.batch
	b.reset()
	b.RunningBefore = len(s.running)

	// 1. Decode: every running sequence past its prefill emits 1 (+ accepted drafts).
	for i := 0; i < len(s.running); i++ {
		q := s.running[i]
		q.chunk, q.emit = 0, 0
		if q.computed < q.target {
			continue
		}
		n := 1
		if s.p.SpecTokens > 0 {
			n += s.drawAccepted()
		}
		n = min(n, q.remaining())
		if n <= 0 { // already at its stop point; Complete finishes it
			continue
		}
		for !s.growKV(q, q.computed+n) {
			victim := s.running[len(s.running)-1]
			s.preempt(victim)
			if victim == q {
				break
			}
		}
		if q.state != stateRunning {
			break // q was the last running sequence and got preempted
		}
		q.emit = n
	}

	// 2. Continue chunked prefills in admission order.
	budget := s.p.MaxPrefillTokens
	for _, q := range s.running {
		if q.computed < q.target && budget > 0 {
			q.chunk = min(q.target-q.computed, budget)
			budget -= q.chunk
		}
	}

	// 3. Admit from the waiting queue (FCFS, head-of-line blocking).
	for budget > 0 && len(s.running) < s.p.MaxRunningRequests && s.waiting.len() > 0 {
		q := s.waiting.front()
		if !s.admit(q) {
			break
		}
		s.waiting.popFront()
		q.chunk = min(q.target-q.computed, budget)
		budget -= q.chunk
		b.Admitted = append(b.Admitted, q)
	}

	for _, q := range s.running {
		if q.chunk == 0 && q.emit == 0 {
			continue
		}
		b.Seqs = append(b.Seqs, q)
		b.PrefillTokens += q.chunk
		if q.emit > 0 {
			b.DecodeSeqs++
			b.KVReadTokens += q.computed
		}
	}
	if len(b.Seqs) == 0 {
		return nil
	}
	if s.p.SpecTokens > 0 {
		b.DraftTokens = b.DecodeSeqs * s.p.SpecTokens
	}
	b.Duration = s.cost(b)
	s.inFlight = true
	return b
}

// Complete applies the pass's outcome: prefill progress, emitted tokens
// (the first token for a sequence whose prefill ended), finished sequences.
func (s *Scheduler) Complete(b *Batch) {
	if !s.inFlight || b != &s.batch {
		panic("batch: Complete without Schedule")
	}
	s.inFlight = false
	for _, q := range b.Seqs {
		if q.chunk > 0 {
			q.computed += q.chunk
			if q.computed == q.target {
				s.publishPrompt(q)
				q.prefilled = true
				q.emit = min(1, q.remaining())
				b.PrefillDone++
			}
		} else if q.emit > 0 {
			b.DecodeTokens += q.emit
		}
		q.Output += q.emit
		q.computed += q.emit
		if q.remaining() <= 0 {
			q.FinishReason = q.stopReason()
			q.state = stateFinished
			s.releaseKV(q)
			b.Finished = append(b.Finished, q)
		}
	}
	if len(b.Finished) > 0 {
		s.running = compactRunning(s.running)
	}
}

// remaining is how many more tokens the sequence generates before it stops.
func (q *Seq) remaining() int { return q.stopAt() - q.Output }

func (q *Seq) stopAt() int {
	if q.natural == 0 || q.IgnoreEOS {
		return q.MaxTokens
	}
	return min(q.MaxTokens, max(q.natural, q.MinTokens))
}

func (q *Seq) stopReason() string {
	if q.Output >= q.MaxTokens {
		return FinishLength
	}
	return FinishStop
}

// admit reserves KV for the sequence's prefill (reusing cached prefix
// blocks) and moves it to the running set; false when KV is short.
func (s *Scheduler) admit(q *Seq) bool {
	bs := s.p.KVBlockSize
	hits := 0
	if s.p.PrefixCache {
		// At least one token must be computed to produce a token, so the
		// usable hits stop short of the whole target.
		maxHits := (q.target - 1) / bs
		for hits < len(q.PrefixHashes) && hits < maxHits {
			b, ok := s.kv.lookup(q.PrefixHashes[hits])
			if !ok {
				break
			}
			s.kv.retain(b)
			q.kv = append(q.kv, b)
			hits++
		}
	}
	need := blocksFor(q.target+1, bs) - hits
	if need > s.kv.available() {
		for _, b := range q.kv {
			s.kv.release(b)
		}
		q.kv = q.kv[:0]
		return false
	}
	for range need {
		q.kv = append(q.kv, s.kv.alloc())
	}
	q.hits = hits
	q.computed = hits * bs
	if !q.admitted {
		q.admitted = true
		q.CachedTokens = hits * bs
		s.prefixQueries += int64(q.PromptLen)
		s.prefixHits += int64(hits * bs)
	}
	s.batch.HitTokens += hits * bs
	s.batch.NewTokens += q.target - hits*bs
	q.state = stateRunning
	s.running = append(s.running, q)
	return true
}

// growKV makes sure q holds blocks for tokens; false when the pool is dry.
func (s *Scheduler) growKV(q *Seq, tokens int) bool {
	need := blocksFor(tokens, s.p.KVBlockSize) - len(q.kv)
	if need <= 0 {
		return true
	}
	if need > s.kv.available() {
		return false
	}
	for range need {
		q.kv = append(q.kv, s.kv.alloc())
	}
	return true
}

// preempt retracts a running sequence: its KV is freed and it goes back to
// the front of the waiting queue, to recompute prompt + output when readmitted.
func (s *Scheduler) preempt(q *Seq) {
	s.releaseKV(q)
	s.running = removeSeq(s.running, q)
	q.state = stateWaiting
	q.target = q.PromptLen + q.Output
	q.computed = 0
	q.chunk, q.emit = 0, 0
	q.Preemptions++
	s.waiting.pushFront(q)
	s.batch.Preempted = append(s.batch.Preempted, q)
}

func (s *Scheduler) releaseKV(q *Seq) {
	for _, b := range q.kv {
		s.kv.release(b)
	}
	q.kv = q.kv[:0]
	q.computed = 0
}

// publishPrompt makes the sequence's newly computed full prompt blocks
// available to later requests as cached prefixes.
func (s *Scheduler) publishPrompt(q *Seq) {
	if !s.p.PrefixCache {
		return
	}
	for i := q.hits; i < len(q.PrefixHashes) && i < len(q.kv); i++ {
		s.kv.publish(q.kv[i], q.PrefixHashes[i])
	}
}

func (s *Scheduler) drawAccepted() int {
	n := 0
	for n < s.p.SpecTokens && s.rng.Float64() < s.p.SpecAcceptRate {
		n++
	}
	return n
}

// cost is the modeled duration of a pass (see Params for the physics).
func (s *Scheduler) cost(b *Batch) time.Duration {
	p := s.p
	d := p.DecodeBase
	if b.DecodeSeqs > 0 {
		verify := time.Duration(1 + p.SpecTokens) // tokens each sequence verifies per pass
		d += time.Duration(b.DecodeSeqs) * p.DecodePerSeq * verify
		d += time.Duration(b.KVReadTokens) * p.DecodePerKVToken
		d += time.Duration(b.DraftTokens) * p.SpecDraftCost
	}
	if b.PrefillTokens > 0 {
		d += p.PrefillOverhead + time.Duration(b.PrefillTokens)*p.PrefillPerToken
	}
	if p.Jitter > 0 {
		z := max(-3, min(3, s.rng.NormFloat64()))
		d = time.Duration(float64(d) * max(0, 1+p.Jitter*z))
	}
	return d
}

// NaturalLength is the output length at which a request with this id emits
// EOS: geometric with the given mean, drawn from (seed, id) alone so that the
// same request stops at the same place whatever the arrival order. 0 = never.
func NaturalLength(seed int64, id string, mean int) int {
	if mean <= 0 {
		return 0
	}
	if mean == 1 {
		return 1
	}
	u := float64(Mix64(uint64(seed)^HashString(id))>>11) / (1 << 53) // [0,1)
	u = max(u, 1e-300)
	n := 1 + int(math.Log(u)/math.Log(1-1/float64(mean)))
	return max(1, n)
}

func removeSeq(list []*Seq, q *Seq) []*Seq {
	for i, x := range list {
		if x == q {
			copy(list[i:], list[i+1:])
			list[len(list)-1] = nil
			return list[:len(list)-1]
		}
	}
	return list
}

func compactRunning(list []*Seq) []*Seq {
	out := list[:0]
	for _, q := range list {
		if q.state == stateRunning {
			out = append(out, q)
		}
	}
	clear(list[len(out):])
	return out
}

// deque is the FCFS waiting queue; preempted sequences re-enter at the front.
type deque struct {
	items []*Seq
	head  int
}

func (d *deque) len() int { return len(d.items) - d.head }

func (d *deque) front() *Seq { return d.items[d.head] }

func (d *deque) pushBack(q *Seq) { d.items = append(d.items, q) }

func (d *deque) pushFront(q *Seq) {
	if d.head > 0 {
		d.head--
		d.items[d.head] = q
		return
	}
	d.items = append(d.items, nil)
	copy(d.items[1:], d.items)
	d.items[0] = q
}

func (d *deque) popFront() *Seq {
	q := d.items[d.head]
	d.items[d.head] = nil
	d.head++
	if d.head == len(d.items) {
		d.items, d.head = d.items[:0], 0
	} else if d.head > 1024 && d.head > len(d.items)/2 {
		n := copy(d.items, d.items[d.head:])
		clear(d.items[n:])
		d.items, d.head = d.items[:n], 0
	}
	return q
}

func (d *deque) remove(q *Seq) {
	for i := d.head; i < len(d.items); i++ {
		if d.items[i] == q {
			copy(d.items[i:], d.items[i+1:])
			d.items[len(d.items)-1] = nil
			d.items = d.items[:len(d.items)-1]
			return
		}
	}
}
