package batch

// Hasher turns a prompt's token ids into the chain hashes of its full KV
// blocks: the hash of block i covers every token of blocks 0..i, so equal
// hashes mean equal prefixes (the radix-tree property, flattened).
type Hasher struct {
	blockSize int
	inBlock   int
	h         uint64
	out       []uint64
}

// NewHasher starts the chain for blocks of blockSize tokens.
func NewHasher(blockSize int) *Hasher {
	return &Hasher{blockSize: blockSize, h: 0xcbf29ce484222325}
}

// Add feeds the next token id.
func (h *Hasher) Add(token uint64) {
	h.h = Mix64(h.h ^ token)
	h.inBlock++
	if h.inBlock == h.blockSize {
		v := h.h
		if v == 0 {
			v = 1 // 0 means "not cached" in the pool
		}
		h.out = append(h.out, v)
		h.inBlock = 0
	}
}

// Hashes returns the chain hashes of the full blocks fed so far.
func (h *Hasher) Hashes() []uint64 { return h.out }

// Mix64 is the splitmix64 finalizer: it spreads a 64-bit value's bits, so
// seeds combined with hashes give independent draws.
func Mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// HashString is FNV-1a over the bytes of s: a fast, allocation-free,
// stable hash for seeding per-request draws.
func HashString(s string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}
