package chunkdigest

import (
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"strconv"
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

// SampleKey is FNV-1a of the id, a 0 byte and the decimal plan index,
// written out to allocate nothing: it must stay that hash, so that which
// requests a run's sample holds does not change with the build.
func TestSampleKeyIsFNV1a(t *testing.T) {
	for _, r := range []client.Record{{}, {ID: "req-00000001", Index: 1}, {ID: "x", Index: -42}, {ID: "ünï", Index: 1 << 40}} {
		h := fnv.New64a()
		h.Write([]byte(r.ID))
		h.Write([]byte{0})
		h.Write(strconv.AppendInt(nil, int64(r.Index), 10))
		if got, want := SampleKey(&r), h.Sum64(); got != want {
			t.Errorf("SampleKey(%q, %d) = %x, want %x", r.ID, r.Index, got, want)
		}
	}
}

// Parts digested within shared bounds, merged as they come, sample exactly
// the requests one digest of the whole run samples.
func TestSampleWithinBoundsIsTheWholeRunsSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var records []client.Record
	for i := range 3 * SampleSize {
		records = append(records, client.Record{ID: "req-" + strconv.Itoa(i), Index: i, Phase: "main", Chunks: walk(rng, time.Second, 5, 7*time.Millisecond)})
	}
	whole := New(nil)
	for i := range records {
		whole.Add(&records[i])
	}
	bounds := NewBounds()
	merged := New(nil)
	refused := 0
	for start := 0; start < len(records); start += 500 {
		part := NewWithin(nil, bounds)
		for i := start; i < min(start+500, len(records)); i++ {
			if !part.phase("main").Sample.Takes(SampleKey(&records[i])) {
				refused++
			}
			part.Add(&records[i])
		}
		merged.Merge(part)
		bounds.Publish(merged)
	}
	if !reflect.DeepEqual(whole.Phases["main"].Sample.Requests(), merged.Phases["main"].Sample.Requests()) {
		t.Error("the merged parts' sample differs from the whole run's")
	}
	if refused == 0 {
		t.Error("the bounds refused no request: the parts copied every ITL")
	}
}
