package batch

// ResetPrefixCache empties the prefix cache, as vLLM's /reset_prefix_cache,
// SGLang's /flush_cache and llama.cpp's slot erase do: no later request hits
// a prefix computed before it. Cached blocks no sequence holds go back to
// the free list; blocks a running sequence holds stay its own but are no
// longer found. It returns the cached tokens dropped (blocks × block size).
func (s *Scheduler) ResetPrefixCache() int {
	p := s.kv
	dropped := 0
	for b := p.head; b >= 0; {
		next := p.next[b]
		p.unlinkLRU(b)
		p.evictable--
		p.hash[b] = 0
		p.free = append(p.free, b)
		dropped++
		b = next
	}
	for h, b := range p.cache {
		if p.hash[b] != 0 { // held by a running sequence
			p.hash[b] = 0
			dropped++
		}
		delete(p.cache, h)
	}
	return dropped * s.p.KVBlockSize
}
