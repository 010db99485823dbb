package peers

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
)

// vLLM's `vllm bench serve --save-result` (vllm/benchmarks/serve.py, and
// benchmarks/benchmark_serving.py before it) writes one JSON object: its
// counts, `mean_/median_/std_/pNN_{ttft,tpot,itl,e2el}_ms` for the metrics
// it was asked for, and with --save-detailed the per-request lists
// `input_lens`, `output_lens`, `ttfts`, `itls` (per request, the gaps
// between chunks), `latencies`, `start_times`, `errors` (older versions
// lack latencies and start_times). Its clock starts before the POST
// (st = time.perf_counter()), a request's latency ends at the last data
// event, ITL is every gap between chunks, TPOT is (latency − ttft) ÷
// (output_len − 1) over successful requests, and its percentiles are
// numpy's.
var vllmDefs = Defs{
	StartsBeforeSend: true,
	EndsAtLastChunk:  true,
	ITL:              "every gap between two chunks, one per chunk whatever its tokens",
	TPOT:             "(latency − ttft) ÷ (output_len − 1)",
	Quantile:         "numpy linear (rank p·(n−1))",
	Counts:           "successful requests",
	itl:              func(r *Request) []float64 { return r.Gaps },
	tpot:             perRequestTPOT,
	quantile:         numpyPercentile,
}

// SGLang's bench_serving forked vLLM's: the same lists, E2E to the end of
// the stream (latency is taken after the loop), the same per-chunk ITL.
var sglangDefs = func() Defs {
	d := vllmDefs
	d.EndsAtLastChunk = false
	return d
}()

func perRequestTPOT(r *Request) []float64 {
	if r.OutputLen < 2 {
		return nil
	}
	return []float64{(r.Latency - r.TTFT) / float64(r.OutputLen-1)}
}

// figureKey matches a reported figure: mean_ttft_ms, median_itl_ms,
// p99_e2el_ms, p99.9_tpot_ms, SGLang's mean_e2e_latency_ms.
var figureKey = regexp.MustCompile(`^(mean|median|p[0-9.]+)_(ttft|tpot|itl|e2el|e2e_latency)_ms$`)

// vllmFigures reads the figures of a vLLM- or SGLang-shaped object.
func vllmFigures(res *Result, top map[string]json.RawMessage) {
	for k, raw := range top {
		m := figureKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		var v float64
		if json.Unmarshal(raw, &v) != nil {
			continue
		}
		stat := m[1]
		if stat == "median" {
			stat = "p50"
		}
		metric := m[2]
		if metric == "e2el" || metric == "e2e_latency" {
			metric = "e2e"
		}
		res.setReported(metric, stat, v, 1e-3)
	}
}

// detailed are the per-request lists of --save-detailed (vLLM) or
// --output-details (SGLang).
type detailed struct {
	// RequestIDPrefix is vLLM's --request-id-prefix, when the result
	// names it (--metadata request_id_prefix=…): request i was sent as
	// X-Request-Id <prefix><i>.
	RequestIDPrefix string       `json:"request_id_prefix"`
	InputLens       []int        `json:"input_lens"`
	OutputLens      []int        `json:"output_lens"`
	TTFTs           []float64    `json:"ttfts"`
	ITLs            [][]float64  `json:"itls"`
	Latencies       []float64    `json:"latencies"`
	StartTimes      []float64    `json:"start_times"`
	Errors          []*string    `json:"errors"`
	Completed       *json.Number `json:"completed"`
	Failed          *json.Number `json:"failed"`
}

// requests turns the lists into Requests; nil without per-request data.
// A list shorter than ttfts is an error: the file is damaged.
func (d *detailed) requests() ([]Request, error) {
	n := len(d.TTFTs)
	if n == 0 {
		return nil, nil
	}
	for name, l := range map[string]int{"itls": len(d.ITLs), "input_lens": len(d.InputLens), "output_lens": len(d.OutputLens)} {
		if l != n {
			return nil, fmt.Errorf("%s has %d entries, ttfts %d", name, l, n)
		}
	}
	out := make([]Request, n)
	for i := range out {
		r := Request{TTFT: d.TTFTs[i], Gaps: d.ITLs[i], PromptLen: d.InputLens[i], OutputLen: d.OutputLens[i]}
		if r.Gaps == nil {
			r.Gaps = []float64{}
		}
		if d.RequestIDPrefix != "" {
			r.ID = d.RequestIDPrefix + strconv.Itoa(i)
		}
		r.OK = r.TTFT > 0
		if i < len(d.Errors) && d.Errors[i] != nil && *d.Errors[i] != "" {
			r.OK = false
		}
		if i < len(d.Latencies) {
			r.Latency = d.Latencies[i]
		} else { // older files: the last chunk is where vLLM's latency ends
			r.Latency, _ = r.lastToken()
		}
		if i < len(d.StartTimes) {
			r.Start, r.HasStart = d.StartTimes[i], true
		}
		if !finite(r.TTFT) || !finite(r.Latency) || !finite(r.Start) || r.OutputLen < 0 || r.PromptLen < 0 {
			return nil, fmt.Errorf("request %d: a time or a length is not a number", i)
		}
		for _, g := range r.Gaps {
			if !finite(g) {
				return nil, fmt.Errorf("request %d: an itl is not a number", i)
			}
		}
		out[i] = r
	}
	return out, nil
}

func (d *detailed) counts(res *Result) {
	if d.Completed != nil {
		if v, err := strconv.Atoi(d.Completed.String()); err == nil {
			res.Completed = v
		}
	}
	if d.Failed != nil {
		if v, err := strconv.Atoi(d.Failed.String()); err == nil {
			res.Failed = v
		}
	}
}

// readVLLMObject reads one vLLM- or SGLang-shaped object.
func readVLLMObject(tool, path string, b []byte, defs Defs) (Result, error) {
	res := Result{Tool: tool, Path: path, Label: tool, Defs: defs}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return res, err
	}
	vllmFigures(&res, top)
	var d detailed
	if err := json.Unmarshal(b, &d); err != nil {
		return res, err
	}
	d.counts(&res)
	reqs, err := d.requests()
	if err != nil {
		return res, err
	}
	res.Requests = reqs
	return res, nil
}

func readVLLM(path string, b []byte) ([]Result, error) {
	r, err := readVLLMObject(VLLM, path, b, vllmDefs)
	if err != nil {
		return nil, err
	}
	return []Result{r}, nil
}
