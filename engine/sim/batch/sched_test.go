package batch

import (
	"fmt"
	"testing"
	"time"
)

func testParams() Params {
	return Params{
		MaxRunningRequests: 4,
		MaxPrefillTokens:   64,
		MaxModelLen:        512,
		KVBlockSize:        4,
		KVBlocks:           256,
		PrefixCache:        true,
		DecodeBase:         time.Millisecond,
		DecodePerSeq:       10 * time.Microsecond,
		PrefillPerToken:    time.Microsecond,
		DecodeLogInterval:  1,
		Seed:               7,
	}
}

func newSched(t *testing.T, p Params) *Scheduler {
	t.Helper()
	s, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// prompt returns a sequence whose prompt is tokens [first, first+n).
func prompt(p Params, id string, first, n, maxTokens int) *Seq {
	h := NewHasher(p.KVBlockSize)
	for i := first; i < first+n; i++ {
		h.Add(uint64(i))
	}
	return &Seq{ID: id, PromptLen: n, PrefixHashes: h.Hashes(), MaxTokens: maxTokens, IgnoreEOS: true}
}

// drain runs passes until nothing is left, returning the passes.
func drain(t *testing.T, s *Scheduler, maxPasses int) []Batch {
	t.Helper()
	var out []Batch
	for range maxPasses {
		b := s.Schedule()
		if b == nil {
			return out
		}
		s.Complete(b)
		cp := *b
		cp.Seqs = append([]*Seq(nil), b.Seqs...)
		cp.Admitted = append([]*Seq(nil), b.Admitted...)
		cp.Preempted = append([]*Seq(nil), b.Preempted...)
		cp.Finished = append([]*Seq(nil), b.Finished...)
		out = append(out, cp)
	}
	t.Fatalf("not drained after %d passes", maxPasses)
	return nil
}

func TestValidate(t *testing.T) {
	t.Parallel()
	p := testParams()
	if err := p.Validate(); err != nil {
		t.Fatalf("valid params: %v", err)
	}
	tests := map[string]func(*Params){
		"no running":      func(p *Params) { p.MaxRunningRequests = 0 },
		"kv too small":    func(p *Params) { p.KVBlocks = 10 },
		"negative cost":   func(p *Params) { p.DecodeBase = -1 },
		"jitter":          func(p *Params) { p.Jitter = 2 },
		"all-zero cost":   func(p *Params) { p.DecodeBase, p.DecodePerSeq, p.PrefillPerToken = 0, 0, 0 },
		"accept rate":     func(p *Params) { p.SpecAcceptRate = 1.5 },
		"log interval 0":  func(p *Params) { p.DecodeLogInterval = 0 },
		"negative eos":    func(p *Params) { p.EOSMeanTokens = -1 },
		"too many drafts": func(p *Params) { p.SpecTokens = 99 },
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := testParams()
			mutate(&p)
			if p.Validate() == nil {
				t.Error("Validate accepted invalid params")
			}
		})
	}
}

func TestOneRequestLifecycle(t *testing.T) {
	t.Parallel()
	p := testParams()
	s := newSched(t, p)
	q := prompt(p, "a", 0, 10, 5)
	s.Add(q)
	passes := drain(t, s, 100)
	// One prefill pass (10 tokens < budget 64) that emits the first token,
	// then 4 decode passes.
	if len(passes) != 5 {
		t.Fatalf("%d passes, want 5", len(passes))
	}
	if passes[0].PrefillTokens != 10 || passes[0].PrefillDone != 1 || len(passes[0].Admitted) != 1 {
		t.Errorf("first pass = %+v", passes[0])
	}
	wantFirst := p.DecodeBase + p.PrefillOverhead + 10*p.PrefillPerToken
	if passes[0].Duration != wantFirst {
		t.Errorf("prefill pass %v, want %v", passes[0].Duration, wantFirst)
	}
	if d := passes[1].Duration; d != p.DecodeBase+p.DecodePerSeq {
		t.Errorf("decode pass %v, want %v", d, p.DecodeBase+p.DecodePerSeq)
	}
	if q.Output != 5 || q.FinishReason != FinishLength || !q.Finished() {
		t.Errorf("seq output %d finish %q", q.Output, q.FinishReason)
	}
	if s.KVUsedBlocks() != 0 || s.Running() != 0 {
		t.Errorf("after finish: %d blocks used, %d running", s.KVUsedBlocks(), s.Running())
	}
}

func TestChunkedPrefill(t *testing.T) {
	t.Parallel()
	p := testParams()
	p.MaxPrefillTokens = 16
	s := newSched(t, p)
	s.Add(prompt(p, "long", 0, 40, 1))
	passes := drain(t, s, 100)
	var chunks []int
	for _, b := range passes {
		chunks = append(chunks, b.PrefillTokens)
	}
	if fmt.Sprint(chunks) != "[16 16 8]" {
		t.Errorf("prefill chunks %v, want [16 16 8]", chunks)
	}
	if passes[2].PrefillDone != 1 || passes[1].PrefillDone != 0 {
		t.Error("the first token must come with the last chunk")
	}
}

func TestRunningCapAndFCFS(t *testing.T) {
	t.Parallel()
	p := testParams()
	s := newSched(t, p)
	var seqs []*Seq
	for i := range 6 {
		q := prompt(p, fmt.Sprint(i), i*100, 4, 3)
		seqs = append(seqs, q)
		s.Add(q)
	}
	b := s.Schedule()
	if len(b.Admitted) != 4 || s.Waiting() != 2 {
		t.Fatalf("admitted %d, waiting %d; want 4 and 2 (cap 4)", len(b.Admitted), s.Waiting())
	}
	for i, q := range b.Admitted {
		if q != seqs[i] {
			t.Errorf("admission %d is %s, want FCFS order", i, q.ID)
		}
	}
	s.Complete(b)
	drain(t, s, 100)
	for _, q := range seqs {
		if q.Output != 3 {
			t.Errorf("%s: output %d", q.ID, q.Output)
		}
	}
}

func TestPrefixCacheHits(t *testing.T) {
	t.Parallel()
	p := testParams()
	s := newSched(t, p)
	first := prompt(p, "first", 0, 40, 2)
	s.Add(first)
	drain(t, s, 100)
	// Same 40-token prefix + 8 new tokens: 10 cached blocks = 40 tokens.
	h := NewHasher(p.KVBlockSize)
	for i := range 48 {
		tok := uint64(i)
		if i >= 40 {
			tok = uint64(1000 + i)
		}
		h.Add(tok)
	}
	second := &Seq{ID: "second", PromptLen: 48, PrefixHashes: h.Hashes(), MaxTokens: 2, IgnoreEOS: true}
	s.Add(second)
	b := s.Schedule()
	if second.CachedTokens != 40 || b.HitTokens != 40 || b.PrefillTokens != 8 {
		t.Errorf("cached %d, batch hits %d, prefill %d; want 40, 40, 8", second.CachedTokens, b.HitTokens, b.PrefillTokens)
	}
	s.Complete(b)
	// A prompt equal to a cached one still computes its last block's worth
	// (at least one token) to make a token.
	same := prompt(p, "same", 0, 40, 1)
	s.Add(same)
	b = s.Schedule()
	if same.CachedTokens != 36 || b.PrefillTokens < 4 {
		t.Errorf("identical prompt: cached %d, prefill %d in a pass with %d tokens", same.CachedTokens, b.PrefillTokens, b.PrefillTokens)
	}
	s.Complete(b)
	q, h2 := s.PrefixCounters()
	if q != 40+48+40 || h2 != 40+36 {
		t.Errorf("prefix counters %d/%d", q, h2)
	}
}

func TestPreemptionWhenKVRunsOut(t *testing.T) {
	t.Parallel()
	p := testParams()
	p.PrefixCache = false
	p.MaxModelLen = 60
	p.KVBlocks = 24 // 96 tokens: two 40-token requests cannot both grow to 60
	s := newSched(t, p)
	a, b := prompt(p, "a", 0, 40, 20), prompt(p, "b", 100, 40, 20)
	s.Add(a)
	s.Add(b)
	passes := drain(t, s, 1000)
	preempted := 0
	for _, pass := range passes {
		preempted += len(pass.Preempted)
	}
	if preempted == 0 || a.Preemptions+b.Preemptions != preempted {
		t.Errorf("preempted %d times (a %d, b %d), want > 0 and consistent", preempted, a.Preemptions, b.Preemptions)
	}
	if a.Output != 20 || b.Output != 20 {
		t.Errorf("outputs %d/%d, want both 20 after recompute", a.Output, b.Output)
	}
	if b.Preemptions == 0 {
		t.Error("the newest request should be the victim")
	}
	if s.KVUsedBlocks() != 0 {
		t.Errorf("%d blocks leaked", s.KVUsedBlocks())
	}
}

func TestAbortFreesKV(t *testing.T) {
	t.Parallel()
	p := testParams()
	s := newSched(t, p)
	a, b := prompt(p, "a", 0, 10, 50), prompt(p, "b", 100, 10, 50)
	s.Add(a)
	s.Add(b)
	s.Complete(s.Schedule())
	s.Abort(a)
	if a.FinishReason != FinishAbort || s.Running() != 1 {
		t.Errorf("after abort: finish %q running %d", a.FinishReason, s.Running())
	}
	s.Abort(b)
	waiting := prompt(p, "c", 200, 10, 5)
	s.Add(waiting)
	s.Abort(waiting)
	if s.KVUsedBlocks() != 0 || s.Waiting() != 0 || s.Schedule() != nil {
		t.Errorf("after aborting all: %d blocks, %d waiting", s.KVUsedBlocks(), s.Waiting())
	}
}

func TestSpeculativeDecoding(t *testing.T) {
	t.Parallel()
	p := testParams()
	p.SpecTokens, p.SpecAcceptRate = 3, 1
	s := newSched(t, p)
	q := prompt(p, "spec", 0, 8, 9)
	s.Add(q)
	passes := drain(t, s, 100)
	// 1 token from prefill, then 4 per pass (1 + 3 accepted), clipped at 9.
	var emitted []int
	for _, b := range passes[1:] {
		emitted = append(emitted, b.DecodeTokens)
	}
	if fmt.Sprint(emitted) != "[4 4]" || q.Output != 9 {
		t.Errorf("decode tokens per pass %v, output %d; want [4 4] and 9", emitted, q.Output)
	}
	if d := passes[1].Duration; d != p.DecodeBase+4*p.DecodePerSeq {
		t.Errorf("spec pass %v, want base + 4 verified tokens", d)
	}
}

func TestNaturalLength(t *testing.T) {
	t.Parallel()
	if NaturalLength(1, "x", 0) != 0 {
		t.Error("mean 0 must mean never")
	}
	sum := 0
	const n = 20000
	for i := range n {
		l := NaturalLength(3, fmt.Sprint(i), 50)
		if l < 1 {
			t.Fatalf("length %d", l)
		}
		sum += l
	}
	if mean := float64(sum) / n; mean < 47 || mean > 53 {
		t.Errorf("mean natural length %.1f, want about 50", mean)
	}
	first, again := NaturalLength(3, "same", 50), NaturalLength(3, "same", 50)
	if first != again {
		t.Errorf("not deterministic: %d then %d", first, again)
	}
}

func TestMinTokensAndEOS(t *testing.T) {
	t.Parallel()
	p := testParams()
	p.EOSMeanTokens = 2
	s := newSched(t, p)
	var seqs []*Seq
	for i := range 20 {
		q := prompt(p, fmt.Sprint("m", i), i*50, 4, 40)
		q.IgnoreEOS = false
		q.MinTokens = 10
		seqs = append(seqs, q)
		s.Add(q)
	}
	drain(t, s, 10000)
	for _, q := range seqs {
		want := min(40, max(10, NaturalLength(p.Seed, q.ID, 2)))
		if q.Output != want {
			t.Errorf("%s: output %d, want %d", q.ID, q.Output, want)
		}
	}
}

// TestResetPrefixCache: after a reset the same prompt hits nothing, the
// dropped blocks are free again, and a later request caches anew.
func TestResetPrefixCache(t *testing.T) {
	p := Params{MaxRunningRequests: 8, MaxPrefillTokens: 4096, MaxModelLen: 1024, KVBlockSize: 16, KVBlocks: 256,
		PrefixCache: true, DecodeBase: 1, DecodeLogInterval: 1}
	s, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	hashes := make([]uint64, 8)
	for i := range hashes {
		hashes[i] = uint64(i + 1)
	}
	runOne := func() *Seq {
		q := &Seq{PromptLen: 128, MaxTokens: 2, IgnoreEOS: true, PrefixHashes: hashes}
		s.Add(q)
		for q.state != stateFinished {
			b := s.Schedule()
			if b == nil {
				t.Fatal("nothing scheduled")
			}
			s.Complete(b)
		}
		return q
	}
	if q := runOne(); q.CachedTokens != 0 {
		t.Fatalf("first request hit %d", q.CachedTokens)
	}
	if q := runOne(); q.CachedTokens != 112 { // 7 of 8 blocks: one token must be computed
		t.Fatalf("warm request hit %d, want 112", q.CachedTokens)
	}
	free := s.KVFreeBlocks()
	if got := s.ResetPrefixCache(); got != 8*16 {
		t.Errorf("reset dropped %d tokens, want 128", got)
	}
	if s.KVEvictableBlocks() != 0 || s.KVFreeBlocks() != free+8 || s.KVUsedBlocks() != 0 {
		t.Errorf("after reset: evictable %d free %d (was %d) used %d", s.KVEvictableBlocks(), s.KVFreeBlocks(), free, s.KVUsedBlocks())
	}
	if q := runOne(); q.CachedTokens != 0 {
		t.Fatalf("request after reset hit %d", q.CachedTokens)
	}
	if q := runOne(); q.CachedTokens != 112 {
		t.Fatalf("cache not rebuilt after reset: hit %d", q.CachedTokens)
	}
}
