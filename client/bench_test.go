package client

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Benchmarks of the per-chunk path; client/BENCHMARKS.md has the numbers
// and the command. Each reports ns/chunk and allocs/chunk beside the per-op
// figures, an op being one whole request of `chunks` content chunks.

// benchStream is a whole response of n content chunks, as SGLang sends it.
func benchStream(n int) []byte {
	return []byte(strings.Join(fullStream("chatcmpl-0123456789abcdef", n), ""))
}

// benchRequest is a request whose chunk slice is preallocated as in a run.
func benchRequest(n int) Request {
	r := request("bench")
	r.MaxTokens = n
	return r
}

// perChunk runs body b.N times and reports per-chunk time and allocations,
// read from the runtime so that they cover every goroutine involved.
func perChunk(b *testing.B, chunks int, body func()) {
	b.Helper()
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for b.Loop() {
		body()
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	total := float64(b.N * chunks)
	b.ReportMetric(float64(elapsed.Nanoseconds())/total, "ns/chunk")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/chunk")
}

// BenchmarkDoInMemory is the client alone: Do over a body held in memory (no
// socket, no server), so every allocation counted is the client's.
func BenchmarkDoInMemory(b *testing.B) {
	for _, n := range []int{16, 1024} {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			c := benchClient(b, "http://engine.test", &http.Client{Transport: bodyTransport(benchStream(n))})
			r := benchRequest(n)
			perChunk(b, n, func() {
				if rec := c.Do(b.Context(), r); !rec.OK() || len(rec.Chunks) != n {
					b.Fatalf("%s: %s, %d chunks", rec.ErrorClass, rec.Error, len(rec.Chunks))
				}
			})
		})
	}
}

// BenchmarkDoLoopback is the whole path over a real socket to an in-process
// server that writes the pre-rendered stream in one go (so the server adds
// almost nothing per chunk).
func BenchmarkDoLoopback(b *testing.B) {
	for _, n := range []int{16, 1024} {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			body := benchStream(n)
			srv := serve(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write(body)
			}))
			c := benchClient(b, srv.URL, nil)
			r := benchRequest(n)
			perChunk(b, n, func() {
				if rec := c.Do(b.Context(), r); !rec.OK() || len(rec.Chunks) != n {
					b.Fatalf("%s: %s, %d chunks", rec.ErrorClass, rec.Error, len(rec.Chunks))
				}
			})
		})
	}
}

// BenchmarkDoLoopbackParallel is BenchmarkDoLoopback from many goroutines at
// once (64 streams per GOMAXPROCS): run with -cpu 1,2, ns/chunk is wall time
// per chunk over all of them, so it halves when throughput doubles with the
// cores. The server writes each response in one go, so the client's work
// dominates.
func BenchmarkDoLoopbackParallel(b *testing.B) {
	const n = 1024
	body := benchStream(n)
	srv := serve(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	c, err := New(Config{BaseURL: srv.URL + "/v1", Model: "m", Dialect: "sglang", IncludeUsage: true, MaxConns: 256})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	r := benchRequest(n)
	b.SetParallelism(64)
	b.ReportAllocs()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if rec := c.Do(b.Context(), r); !rec.OK() || len(rec.Chunks) != n {
				b.Errorf("%s: %s, %d chunks", rec.ErrorClass, rec.Error, len(rec.Chunks))
				return
			}
		}
	})
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*n), "ns/chunk")
}

// BenchmarkGoOpenAIRecv is the comparison: go-openai's own Recv, which
// decodes every chunk into a full ChatCompletionStreamResponse.
func BenchmarkGoOpenAIRecv(b *testing.B) {
	const n = 1024
	oc := openai.DefaultConfig("")
	oc.BaseURL = "http://engine.test/v1"
	oc.HTTPClient = &http.Client{Transport: bodyTransport(benchStream(n))}
	api := openai.NewClientWithConfig(oc)
	req := openai.ChatCompletionRequest{Model: "m", Stream: true,
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hello"}}}
	perChunk(b, n, func() {
		s, err := api.CreateChatCompletionStream(b.Context(), req)
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for {
			resp, err := s.Recv()
			if err != nil {
				break
			}
			if len(resp.Choices) > 0 && resp.Choices[0].Delta.Content != "" {
				got++
			}
		}
		_ = s.Close()
		if got != n {
			b.Fatalf("%d chunks, want %d", got, n)
		}
	})
}

// BenchmarkRawLines is the floor any SSE client stands on: split the same
// in-memory body into lines (bufio.ReadSlice, no copy) and take the time of
// each, doing nothing else.
func BenchmarkRawLines(b *testing.B) {
	const n = 1024
	body := benchStream(n)
	r := bytes.NewReader(body)
	br := bufio.NewReader(r)
	var last time.Duration
	start := time.Now()
	perChunk(b, n, func() {
		r.Reset(body)
		br.Reset(r)
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				break
			}
			if len(line) > 1 {
				last = time.Since(start)
			}
		}
	})
	_ = last
}

// BenchmarkChunkDecode is the client's own work per chunk: the SSE reader
// over the event (its data line and the blank line after it), and the decode
// of its data.
func BenchmarkChunkDecode(b *testing.B) {
	event := []byte(contentEvent("chatcmpl-0123456789abcdef", "tok "))
	r := bytes.NewReader(event)
	sr := newSSEReader(r)
	var dec chunkDecoder
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(event)
		sr.r, sr.w, sr.rerr = 0, 0, nil
		ev, err := sr.next()
		if err != nil || !ev.message() {
			b.Fatal("not a message event", err)
		}
		v, err := dec.decode(ev.data)
		if err != nil || !v.content {
			b.Fatal("not a content chunk", err)
		}
	}
}

func benchClient(b *testing.B, baseURL string, hc *http.Client) *Client {
	b.Helper()
	c, err := New(Config{BaseURL: baseURL + "/v1", Model: "m", Dialect: "sglang", IncludeUsage: true, MaxConns: 1, HTTPClient: hc})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}

// BenchmarkDoNoStreamLoopback is one non-streamed request over a real socket
// to an in-process server that answers with a small whole completion: the
// per-request cost that a closed loop of short requests pays (issue 19,
// decision 0602), with a timeout set as a scenario's workload.timeout sets it.
func BenchmarkDoNoStreamLoopback(b *testing.B) {
	reply := []byte(`{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok ok ok ok ok ok ok ok"},"finish_reason":"length"}],"usage":{"prompt_tokens":8,"completion_tokens":8,"total_tokens":16}}`)
	srv := serve(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
	c, err := New(Config{BaseURL: srv.URL + "/v1", Model: "m", Dialect: "sglang", IncludeUsage: true, MaxConns: 1,
		NoStream: true, Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	r := benchRequest(8)
	b.ReportAllocs()
	for b.Loop() {
		if rec := c.Do(b.Context(), r); !rec.OK() || rec.OutputTokens != 8 {
			b.Fatalf("%s: %s, %d tokens", rec.ErrorClass, rec.Error, rec.OutputTokens)
		}
	}
}
