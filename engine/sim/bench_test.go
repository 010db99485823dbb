package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkStreamTokens streams tokens through the whole engine (HTTP,
// batching loop, chunk writes) to 64 concurrent clients on loopback and
// reports the cost per token. Client and engine share the process: the
// engine-only figure comes from internal/simbench (BENCHMARKS.md).
func BenchmarkStreamTokens(b *testing.B) {
	p, _ := Preset("tiny")
	p.DecodeBase = 500 * time.Microsecond
	p.DecodePerSeq = 0
	p.PrefillOverhead = 0
	e, err := New(Config{Params: p, MaxStepTruth: 1})
	if err != nil {
		b.Fatal(err)
	}
	ep, err := e.Start(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	defer e.Stop(b.Context())
	const streams = 64
	perStream := max(1, b.N/streams)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams}}
	body := fmt.Sprintf(`{"messages":[{"role":"user","content":"go"}],"stream":true,"max_tokens":%d,"ignore_eos":true}`, perStream)
	mark := []byte(`"delta":{"content"`)
	b.ResetTimer()
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for range streams {
		wg.Go(func() {
			resp, err := client.Post(ep.BaseURL+"/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			defer resp.Body.Close()
			n := 0
			br := bufio.NewReader(resp.Body)
			for {
				line, err := br.ReadSlice('\n')
				if bytes.Contains(line, mark) {
					n++
				}
				if err != nil {
					break
				}
			}
			mu.Lock()
			total += n
			mu.Unlock()
		})
	}
	wg.Wait()
	b.StopTimer()
	if total != streams*perStream {
		b.Fatalf("streamed %d tokens, want %d", total, streams*perStream)
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkChunkEncode is the per-token rendering cost.
func BenchmarkChunkEncode(b *testing.B) {
	enc := newEncoder("0123456789abcdef0123456789abcdef", "llmbench-sim", 1700000000, false, false, true)
	a := answer{base: 42}
	buf := make([]byte, 0, 512)
	for i := 0; b.Loop(); i++ {
		buf = enc.tokens(buf[:0], &a, 0, i, i+1, false, nil)
	}
}

// BenchmarkPromptTokens is the tokenizer's cost on a 1,000-word prompt.
func BenchmarkPromptTokens(b *testing.B) {
	text := words("w", 1000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		promptTokens("user", text, nil)
	}
}
