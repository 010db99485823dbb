package batch

// kvPool is a paged KV cache: fixed-size blocks with reference counts, and a
// radix-style prefix cache keyed by the chain hash of a block and all blocks
// before it (so a hit on block i implies hits on blocks 0..i-1). A block that
// no running sequence references but that holds a cached prefix is
// "evictable": it counts as free (as in SGLang and vLLM) and is reclaimed in
// least-recently-released order when fresh blocks run out.
type kvPool struct {
	ref  []int32
	hash []uint64 // chain hash of the cached content; 0 = not in the cache

	// LRU list of evictable blocks, oldest at head; -1 = none.
	prev, next []int32
	head, tail int32

	free      []int32 // unreferenced, uncached blocks
	cache     map[uint64]int32
	used      int // blocks with ref > 0
	evictable int
}

func newKVPool(blocks int) *kvPool {
	p := &kvPool{
		ref:   make([]int32, blocks),
		hash:  make([]uint64, blocks),
		prev:  make([]int32, blocks),
		next:  make([]int32, blocks),
		head:  -1,
		tail:  -1,
		free:  make([]int32, blocks),
		cache: make(map[uint64]int32),
	}
	for i := range p.free {
		p.free[i] = int32(blocks - 1 - i) // pop order 0, 1, 2, ...
	}
	return p
}

func (p *kvPool) capacity() int { return len(p.ref) }

// available is how many blocks alloc can still hand out.
func (p *kvPool) available() int { return len(p.free) + p.evictable }

// alloc takes a fresh block, evicting the oldest cached prefix if needed.
// The caller checks available first.
func (p *kvPool) alloc() int32 {
	var b int32
	if n := len(p.free); n > 0 {
		b = p.free[n-1]
		p.free = p.free[:n-1]
	} else {
		b = p.head
		p.unlinkLRU(b)
		p.evictable--
		delete(p.cache, p.hash[b])
		p.hash[b] = 0
	}
	p.ref[b] = 1
	p.used++
	return b
}

// lookup returns the cached block holding the prefix with chain hash h.
func (p *kvPool) lookup(h uint64) (int32, bool) {
	b, ok := p.cache[h]
	return b, ok
}

// retain adds a reference to a cached block found by lookup.
func (p *kvPool) retain(b int32) {
	if p.ref[b] == 0 {
		p.unlinkLRU(b)
		p.evictable--
		p.used++
	}
	p.ref[b]++
}

// release drops a reference; an unreferenced block becomes evictable when it
// holds a cached prefix, free otherwise.
func (p *kvPool) release(b int32) {
	p.ref[b]--
	if p.ref[b] > 0 {
		return
	}
	p.used--
	if p.hash[b] != 0 {
		p.linkLRU(b)
		p.evictable++
		return
	}
	p.free = append(p.free, b)
}

// publish records that block b holds the prefix with chain hash h, unless
// another block already does.
func (p *kvPool) publish(b int32, h uint64) {
	if h == 0 || p.hash[b] != 0 {
		return
	}
	if _, dup := p.cache[h]; dup {
		return
	}
	p.cache[h] = b
	p.hash[b] = h
}

func (p *kvPool) linkLRU(b int32) {
	p.prev[b], p.next[b] = p.tail, -1
	if p.tail >= 0 {
		p.next[p.tail] = b
	} else {
		p.head = b
	}
	p.tail = b
}

func (p *kvPool) unlinkLRU(b int32) {
	if p.prev[b] >= 0 {
		p.next[p.prev[b]] = p.next[b]
	} else {
		p.head = p.next[b]
	}
	if p.next[b] >= 0 {
		p.prev[p.next[b]] = p.prev[b]
	} else {
		p.tail = p.prev[b]
	}
	p.prev[b], p.next[b] = -1, -1
}
