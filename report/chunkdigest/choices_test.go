package chunkdigest

import (
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// A record of two choices is digested per choice: its ITLs are the gaps
// within each choice (what client.Record.ITLs says), never across them.
func TestChoicesDigestedPerChoice(t *testing.T) {
	ms := time.Millisecond
	r := client.Record{ID: "a", Phase: "main", End: 60 * ms, Choices: 2, Chunks: []client.Chunk{
		{At: 10 * ms, Tokens: 1}, {At: 11 * ms, Tokens: 1, Choice: 1},
		{At: 20 * ms, Tokens: 1}, {At: 21 * ms, Tokens: 1, Choice: 1},
		{At: 30 * ms, Tokens: 2}, {At: 31 * ms, Tokens: 1, Choice: 1},
	}}
	want := r.ITLs(nil)
	d := New([]Span{{From: 0, To: time.Second}})
	req := d.Add(&r)
	if req.ITLs != int32(len(want)) || Of(&r).ITLs != req.ITLs || req.Chunks != 6 {
		t.Errorf("request digest %+v (Of %+v), want %d ITLs", req, Of(&r), len(want))
	}
	itl := d.Phases["main"].ITL
	if itl.N() != len(want) || itl.Min() != 5*ms || itl.Max() != 10*ms {
		t.Errorf("ITL sketch n %d min %v max %v; want %d ITLs from 5 ms to 10 ms (interleaved they would be 1 ms)", itl.N(), itl.Min(), itl.Max(), len(want))
	}
	if g := d.InSpans.Gaps; g.N() != 4 || g.Min() != 10*ms {
		t.Errorf("gaps in spans n %d min %v; want 4 of 10 ms", g.N(), g.Min())
	}
	if got := d.Phases["main"].Arrivals.Total(); got != 7 {
		t.Errorf("arrivals hold %d tokens, want 7", got)
	}
}
