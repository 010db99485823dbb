package chunkdigest

import (
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// Add walks each record's chunks once, finding bins by index and adding
// one-token ITLs to the sketch in a batch: it must digest exactly as adding
// value by value does, in order or not, across zero and negative times, with
// 0 to 3 tokens a chunk, failed requests, spans and samples.
func TestAddDigestsAsValueByValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name   string
		chunks func() []client.Chunk
	}{
		{"in order, gaps under a bin", func() []client.Chunk { return walk(rng, 0, 200, 7*time.Millisecond) }},
		{"in order, gaps over a bin", func() []client.Chunk { return walk(rng, 0, 50, 35*time.Millisecond) }},
		{"on the bins' edges", func() []client.Chunk {
			cs := make([]client.Chunk, 40)
			for i := range cs {
				cs[i] = client.Chunk{At: time.Duration(i-10) * BinWidth / 2, Tokens: 1}
			}
			return cs
		}},
		{"across zero", func() []client.Chunk { return walk(rng, -25*time.Millisecond, 30, 3*time.Millisecond) }},
		{"out of order", func() []client.Chunk {
			cs := walk(rng, 0, 100, 6*time.Millisecond)
			rng.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
			return cs
		}},
		{"one chunk", func() []client.Chunk { return walk(rng, time.Second, 1, time.Millisecond) }},
		{"none", func() []client.Chunk { return nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			spans := []Span{{From: 0, To: time.Second}}
			got, want := New(spans), New(spans)
			for i := range 300 {
				r := client.Record{ID: strconv.Itoa(i), Index: i, Phase: []string{"a", "b"}[i%2], Chunks: c.chunks()}
				if len(r.Chunks) > 0 {
					r.End = r.Chunks[len(r.Chunks)-1].At
				}
				if i%7 == 3 {
					r.ErrorClass = client.ErrHTTPStatus
				}
				if g, w := got.Add(&r), Of(&r); g != w {
					t.Fatalf("record %d: Add kept %+v, Of says %+v", i, g, w)
				}
				addValueByValue(want, &r)
			}
			if g, w := canonical(got), canonical(want); !reflect.DeepEqual(g, w) {
				t.Errorf("Add:\n%+v\nvalue by value:\n%+v", g, w)
			}
		})
	}
}

// addValueByValue is Add written plainly: one Bins.Add per chunk, one
// Sketch.Add or AddN per gap.
func addValueByValue(d *Digest, r *client.Record) {
	if len(r.Chunks) == 0 {
		return
	}
	p := d.phase(r.Phase)
	for _, ch := range r.Chunks {
		p.Arrivals.Add(ch.At, int64(max(ch.Tokens, 1)))
	}
	if !r.OK() || len(r.Chunks) < 2 {
		return
	}
	inSpan := false
	for _, s := range d.Spans {
		inSpan = inSpan || (r.End > s.From && r.End <= s.To)
	}
	var itls []time.Duration
	for i := 1; i < len(r.Chunks); i++ {
		gap := r.Chunks[i].At - r.Chunks[i-1].At
		per, k := gap, max(r.Chunks[i].Tokens, 1)
		per = gap / time.Duration(k)
		for range k {
			itls = append(itls, per)
			p.ITL.Add(per)
			if inSpan {
				d.InSpans.ITL.Add(per)
			}
		}
		if inSpan {
			d.InSpans.Gaps.Add(gap)
		}
	}
	p.Sample.Offer(SampleKey(r), itls)
}

// canonical is what a digest says, whatever the order its sample heard
// of its requests, with the sketches' buckets read as their quantiles.
func canonical(d *Digest) any {
	type phase struct {
		ITL      Sketch
		Arrivals Bins
		Sample   []Sampled
	}
	out := map[string]phase{}
	for name, p := range d.Phases {
		arr := p.Arrivals
		arr.tokens = slices.Clip(arr.tokens)
		out[name] = phase{trimmed(p.ITL), arr, p.Sample.Requests()}
	}
	return []any{out, trimmed(d.InSpans.ITL), trimmed(d.InSpans.Gaps)}
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
	part := NewWithin(nil, bounds) // one part, Reset for the next
	for start := 0; start < len(records); start += 500 {
		for i := start; i < min(start+500, len(records)); i++ {
			if !part.phase("main").Sample.Takes(SampleKey(&records[i])) {
				refused++
			}
			part.Add(&records[i])
		}
		merged.Absorb(part)
		bounds.Publish(merged)
		part.Reset()
	}
	if !reflect.DeepEqual(whole.Phases["main"].Sample.Requests(), merged.Phases["main"].Sample.Requests()) {
		t.Error("the merged parts' sample differs from the whole run's")
	}
	if refused == 0 {
		t.Error("the bounds refused no request: the parts copied every ITL")
	}
}
