// Package peerstest writes peers' result files from llmbench records, each
// by the arithmetic of the code that writes it, so tests can compare a
// result with the run it was made from (the timings are the same: any
// difference is one of definitions).
package peerstest

import (
	"encoding/json"
	"math"
	"slices"

	"github.com/llmbench-org/llmbench/client"
)

// vllmOutput is vLLM's RequestFuncOutput as lib/endpoint_request_func.py
// fills it for a streamed chat request: st = time.perf_counter() before
// the POST; ttft at the first chunk with choices; itl the gap from each
// later chunk to the one before; latency to the last data event, which
// llmbench's record knows as its last output chunk.
type vllmOutput struct {
	ok                bool
	ttft, latency, st float64
	itl               []float64
	promptLen, outLen int
	err               string
}

func outputOf(r *client.Record) vllmOutput {
	// vLLM's prompt_len is its dataset's planned length: llmbench's target.
	o := vllmOutput{ok: r.OK() && r.FirstToken > 0, st: r.Sent.Seconds(), promptLen: r.TargetPromptTokens, itl: []float64{}, err: r.Error}
	if o.promptLen == 0 {
		o.promptLen = r.PromptTokens
	}
	if !o.ok {
		if o.err == "" {
			o.err = "no output"
		}
		return o
	}
	o.ttft = (r.FirstToken - r.Sent).Seconds()
	for i := 1; i < len(r.Chunks); i++ {
		o.itl = append(o.itl, (r.Chunks[i].At - r.Chunks[i-1].At).Seconds())
	}
	o.latency = (r.Chunks[len(r.Chunks)-1].At - r.Sent).Seconds()
	o.outLen = r.OutputTokens // usage's completion_tokens, as vLLM prefers it
	return o
}

// VLLMResult is the JSON `vllm bench serve --save-result` writes for recs
// (vllm/benchmarks/serve.py: calculate_metrics, then the result dict and
// process_one_metric for ttft, tpot, itl and e2el at percentiles 99 and
// 90); without detailed, the per-request lists are deleted as its main()
// does without --save-detailed.
func VLLMResult(recs []client.Record, duration float64, detailed bool) []byte {
	var outs []vllmOutput
	for i := range recs {
		outs = append(outs, outputOf(&recs[i]))
	}
	var ttfts, tpots, itls, e2els []float64
	completed, failed, totalIn, totalOut := 0, 0, 0, 0
	res := map[string]any{}
	var inputLens, outputLens []int
	var ttftList, latencies, starts []float64
	var itlList [][]float64
	var errs []string
	for _, o := range outs {
		inputLens = append(inputLens, o.promptLen)
		ttftList = append(ttftList, o.ttft)
		itlList = append(itlList, o.itl)
		latencies = append(latencies, o.latency)
		starts = append(starts, o.st)
		errs = append(errs, map[bool]string{true: "", false: o.err}[o.ok])
		if !o.ok {
			failed++
			outputLens = append(outputLens, 0)
			continue
		}
		completed++
		outputLens = append(outputLens, o.outLen)
		totalIn += o.promptLen
		totalOut += o.outLen
		if o.outLen > 1 {
			tpots = append(tpots, (o.latency-o.ttft)/float64(o.outLen-1))
		}
		itls = append(itls, o.itl...)
		ttfts = append(ttfts, o.ttft)
		e2els = append(e2els, o.latency)
	}
	res["duration"], res["completed"], res["failed"] = duration, completed, failed
	res["total_input_tokens"], res["total_output_tokens"] = totalIn, totalOut
	res["request_throughput"] = float64(completed) / duration
	for name, vals := range map[string][]float64{"ttft": ttfts, "tpot": tpots, "itl": itls, "e2el": e2els} {
		res["mean_"+name+"_ms"] = mean(vals) * 1000
		res["median_"+name+"_ms"] = percentile(50, vals) * 1000
		res["std_"+name+"_ms"] = std(vals) * 1000
		res["p90_"+name+"_ms"] = percentile(90, vals) * 1000
		res["p99_"+name+"_ms"] = percentile(99, vals) * 1000
	}
	if detailed {
		res["input_lens"], res["output_lens"], res["ttfts"], res["itls"] = inputLens, outputLens, ttftList, itlList
		res["latencies"], res["start_times"], res["errors"] = latencies, starts, errs
	}
	b, _ := json.Marshal(res)
	return b
}

// np.mean, np.std and np.percentile of `values or 0`.
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func std(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	m, s := mean(xs), 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)))
}

func percentile(p float64, xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	h := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}
