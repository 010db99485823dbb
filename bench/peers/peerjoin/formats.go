package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// measured is one request as a tool reported it, under the tool's own
// definitions (decision 2210 says which): id is what it sent as
// X-Request-Id ("" when it sends none: then only distributions compare).
type measured struct {
	id          string
	ttft, e2e   time.Duration
	itl         time.Duration // the tool's per-request ITL (mean over its gaps)
	hasITL, ok  bool
	hasTTFT     bool
	outputToken int
}

// readers maps a -format to the reader of that tool's per-request output.
var readers = map[string]func(io.Reader) ([]measured, error){
	"llmbench": readLLMBench,
	"vllm":     readVLLM,
	"aiperf":   readAIPerf,
	"guidellm": readGuideLLM,
}

func readResults(format, path string) ([]measured, error) {
	read, ok := readers[format]
	if !ok {
		return nil, fmt.Errorf("unknown format %q (llmbench, vllm, aiperf, guidellm)", format)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ms, err := read(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %w", path, format, err)
	}
	return ms, nil
}

// readLLMBench reads a run's requests.jsonl: the records' own TTFT, E2E
// and mean ITL (client.Record, the one definition of each).
func readLLMBench(r io.Reader) ([]measured, error) {
	dec := json.NewDecoder(r)
	var out []measured
	for {
		var rec client.Record
		if err := dec.Decode(&rec); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		if rec.Phase != "" && rec.Phase != "main" {
			continue
		}
		m := measured{id: rec.ID, e2e: rec.E2E(), ok: rec.OK(), outputToken: rec.OutputTokens}
		m.ttft, m.hasTTFT = rec.TTFT()
		m.itl, m.hasITL = rec.MeanITL()
		out = append(out, m)
	}
}

// vllmResult is the part of `vllm bench serve --save-result
// --save-detailed` this reads: per-request lists in the order of the
// requests (vllm/benchmarks/serve.py, benchmark()'s result), seconds.
type vllmResult struct {
	RequestIDPrefix string      `json:"request_id_prefix"`
	TTFTs           []float64   `json:"ttfts"`
	ITLs            [][]float64 `json:"itls"`
	Latencies       []float64   `json:"latencies"`
	OutputLens      []int       `json:"output_lens"`
	Errors          []string    `json:"errors"`
}

// readVLLM: request i was sent with x-request-id <prefix><i>
// (--request-id-prefix; the random dataset numbers them in order), so
// the id is rebuilt from the prefix the script passes in the result's
// metadata (--metadata request_id_prefix=…). TTFT is to the first chunk
// with choices (the role chunk), E2E to the last chunk with choices, and
// ITL every gap between chunks with choices after the first: per chunk.
func readVLLM(r io.Reader) ([]measured, error) {
	var res vllmResult
	if err := json.NewDecoder(r).Decode(&res); err != nil {
		return nil, err
	}
	if len(res.TTFTs) == 0 || len(res.Latencies) != len(res.TTFTs) {
		return nil, fmt.Errorf("no per-request data (ttfts %d, latencies %d): run with --save-detailed", len(res.TTFTs), len(res.Latencies))
	}
	out := make([]measured, len(res.TTFTs))
	for i := range res.TTFTs {
		m := measured{ttft: secs(res.TTFTs[i]), hasTTFT: true, e2e: secs(res.Latencies[i])}
		m.ok = i >= len(res.Errors) || res.Errors[i] == ""
		m.hasTTFT = m.ok
		if res.RequestIDPrefix != "" {
			m.id = fmt.Sprintf("%s%d", res.RequestIDPrefix, i)
		}
		if i < len(res.ITLs) && len(res.ITLs[i]) > 0 {
			var sum float64
			for _, g := range res.ITLs[i] {
				sum += g
			}
			m.itl, m.hasITL = secs(sum/float64(len(res.ITLs[i]))), true
		}
		if i < len(res.OutputLens) {
			m.outputToken = res.OutputLens[i]
		}
		out[i] = m
	}
	return out, nil
}

func secs(s float64) time.Duration    { return time.Duration(s * float64(time.Second)) }
func millis(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
