package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/peers"
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

// readResults reads a tool's per-request output: llmbench's requests.jsonl
// here, a peer's file with report/peers, the one reader of each tool's
// result files (decision 2220).
func readResults(format, path string) ([]measured, error) {
	switch format {
	case "llmbench":
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		ms, err := readLLMBench(bufio.NewReaderSize(f, 1<<20))
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", path, format, err)
		}
		return ms, nil
	case peers.VLLM, peers.AIPerf, peers.GuideLLM:
		return readPeer(format, path)
	}
	return nil, fmt.Errorf("unknown format %q (llmbench, vllm, aiperf, guidellm)", format)
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

// readPeer reads a peer's file, each request's figures as the tool
// defines them (decision 2210 says which): TTFT and E2E as it measured
// them, ITL its own (vLLM: the mean of the request's gaps between chunks;
// AIPerf: (latency − TTFT) ÷ (output tokens − 1); GuideLLM: (last token −
// first token) ÷ (output tokens − 1)), and the id it joins the truth by
// (vLLM: request_id_prefix, which bench/peers/run passes in the result's
// metadata, and the index; AIPerf: X-Request-ID; GuideLLM: the engine's
// response id).
func readPeer(tool, path string) ([]measured, error) {
	results, err := peers.Read(path)
	if err != nil {
		return nil, err
	}
	var out []measured
	for _, r := range results {
		if r.Tool != tool {
			return nil, fmt.Errorf("%s: a %s result, not %s", path, r.Tool, tool)
		}
		if r.Requests == nil {
			return nil, fmt.Errorf("%s: no per-request data: run vLLM with --save-detailed", path)
		}
		for i := range r.Requests {
			q := &r.Requests[i]
			m := measured{id: q.ID, ok: q.OK, e2e: secs(q.Latency), outputToken: q.OutputLen}
			m.ttft, m.hasTTFT = secs(q.TTFT), q.TTFT > 0
			if itl, ok := r.Defs.ToolITL(q); ok {
				m.itl, m.hasITL = secs(itl), true
			}
			out = append(out, m)
		}
	}
	return out, nil
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
