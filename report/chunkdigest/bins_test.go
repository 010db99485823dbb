package chunkdigest

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// addChunks finds bins by comparison rather than division: it must count
// exactly as one Add per chunk does, in order or not, across zero and
// negative times, with several tokens a chunk.
func TestAddChunksCountsAsAddDoes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name    string
		chunks  func() []client.Chunk
		ordered bool
	}{
		{"in order, gaps under a bin", func() []client.Chunk { return walk(rng, 0, 200, 7*time.Millisecond) }, true},
		{"in order, gaps over a bin", func() []client.Chunk { return walk(rng, 0, 50, 35*time.Millisecond) }, true},
		{"on the bins' edges", func() []client.Chunk {
			cs := make([]client.Chunk, 40)
			for i := range cs {
				cs[i] = client.Chunk{At: time.Duration(i-10) * BinWidth / 2, Tokens: 1}
			}
			return cs
		}, true},
		{"across zero", func() []client.Chunk { return walk(rng, -25*time.Millisecond, 30, 3*time.Millisecond) }, true},
		{"out of order", func() []client.Chunk {
			cs := walk(rng, 0, 100, 6*time.Millisecond)
			rng.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
			return cs
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var fast, slow Bins
			for range 20 {
				cs := c.chunks()
				fast.addChunks(cs)
				for _, ch := range cs {
					slow.Add(ch.At, int64(max(ch.Tokens, 1)))
				}
			}
			if !reflect.DeepEqual(fast.tokens, slow.tokens) || fast.start != slow.start {
				t.Errorf("addChunks: start %d %v; Add: start %d %v", fast.start, fast.tokens, slow.start, slow.tokens)
			}
		})
	}
}

// walk is n chunks from start, gaps up to 2×mean, 0–3 tokens each.
func walk(rng *rand.Rand, start time.Duration, n int, mean time.Duration) []client.Chunk {
	cs := make([]client.Chunk, n)
	at := start
	for i := range cs {
		at += time.Duration(rng.Int64N(int64(2 * mean)))
		cs[i] = client.Chunk{At: at, Tokens: int32(rng.IntN(4))}
	}
	return cs
}
