package main

import (
	"encoding/json"
	"io"
)

// guidellmStats is the part of one request GuideLLM 0.8 writes in
// benchmarks.json (benchmarks[].requests.{successful,errored,incomplete},
// guidellm/schemas/request_stats.py, GenerativeRequestStats).
type guidellmStats struct {
	ResponseID    string   `json:"response_id"`
	TTFTms        *float64 `json:"time_to_first_token_ms"`
	ITLms         *float64 `json:"inter_token_latency_ms"`
	RequestLatSec *float64 `json:"request_latency"`
	OutputTokens  int      `json:"output_tokens"`
}

type guidellmReport struct {
	Benchmarks []struct {
		Requests struct {
			Successful []guidellmStats `json:"successful"`
			Errored    []guidellmStats `json:"errored"`
			Incomplete []guidellmStats `json:"incomplete"`
		} `json:"requests"`
	} `json:"benchmarks"`
}

// readGuideLLM: GuideLLM sends no request id, but keeps the response's
// own (response_id: the engine's "chatcmpl-<id>", the truth's chunk_id),
// so each request joins its truth. TTFT is time_to_first_token_ms (the
// first chunk with a token), E2E request_latency (request start to the
// response's end), ITL inter_token_latency_ms: (last token − first token)
// ÷ (output tokens − 1), per token. A sampled report (metrics.sample_size)
// keeps fewer requests than it sent; bench/peers/run keeps them all.
func readGuideLLM(r io.Reader) ([]measured, error) {
	var rep guidellmReport
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return nil, err
	}
	var out []measured
	for _, b := range rep.Benchmarks {
		for _, group := range []struct {
			stats []guidellmStats
			ok    bool
		}{{b.Requests.Successful, true}, {b.Requests.Errored, false}, {b.Requests.Incomplete, false}} {
			for _, s := range group.stats {
				m := measured{id: s.ResponseID, ok: group.ok && s.RequestLatSec != nil, outputToken: s.OutputTokens}
				if s.TTFTms != nil {
					m.ttft, m.hasTTFT = millis(*s.TTFTms), true
				}
				if s.ITLms != nil {
					m.itl, m.hasITL = millis(*s.ITLms), true
				}
				if s.RequestLatSec != nil {
					m.e2e = secs(*s.RequestLatSec)
				}
				out = append(out, m)
			}
		}
	}
	return out, nil
}
