package batch

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkPass is one Schedule+Complete with 1,024 decoding sequences.
func BenchmarkPass(b *testing.B) {
	p := Params{
		MaxRunningRequests: 1024, MaxPrefillTokens: 1 << 20, MaxModelLen: 1 << 20,
		KVBlockSize: 16, KVBlocks: 1 << 20, DecodeBase: time.Millisecond, DecodeLogInterval: 40,
	}
	s, err := New(p)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1024 {
		s.Add(&Seq{ID: fmt.Sprint(i), PromptLen: 64, MaxTokens: 1 << 30, IgnoreEOS: true})
	}
	s.Complete(s.Schedule())
	for b.Loop() {
		s.Complete(s.Schedule())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/seq-pass")
}
