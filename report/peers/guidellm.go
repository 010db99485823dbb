package peers

import (
	"encoding/json"
	"fmt"
)

// GuideLLM's benchmarks.json (GenerativeBenchmarksReport, v0.6–0.8:
// src/guidellm/benchmark/schemas/report.py, benchmark.py, metrics.py and
// src/guidellm/schemas/request_stats.py, info.py): `benchmarks`, each with
// `metrics` (time_to_first_token_ms, inter_token_latency_ms,
// time_per_output_token_ms in ms, request_latency in s; each split by
// status, `successful` being a DistributionSummary of mean, median and
// percentiles p50…p999) and `requests` by status, each request's
// info.timings holding request_start, first_token_iteration,
// last_token_iteration and request_end (epoch seconds), with its
// output_tokens and prompt_tokens. It keeps no chunk times: its ITL is per
// request, (last token − first token) ÷ (output tokens − 1), and its TPOT
// (last token − request start) ÷ output tokens counts the first token in.
// Percentiles come from the inverse CDF.
var guidellmDefs = Defs{
	StartsBeforeSend: true,
	ITL:              "per request, (last token − first token) ÷ (output tokens − 1)",
	TPOT:             "per request, (last token − request start) ÷ output tokens: the first token included",
	Quantile:         "inverse CDF (the ⌈p·n⌉-th value)",
	Counts:           "successful requests",
	itl: func(r *Request) []float64 {
		if r.OutputLen < 2 || r.LastToken <= 0 {
			return nil
		}
		return []float64{(r.LastToken - r.TTFT) / float64(r.OutputLen-1)}
	},
	tpot: func(r *Request) []float64 {
		if r.OutputLen < 1 || r.LastToken <= 0 {
			return nil
		}
		return []float64{r.LastToken / float64(r.OutputLen)}
	},
	quantile: inverseCDF,
}

type guidellmReport struct {
	Benchmarks []struct {
		Metrics  map[string]json.RawMessage `json:"metrics"`
		Requests struct {
			Successful []guidellmRequest `json:"successful"`
			Errored    []guidellmRequest `json:"errored"`
			Incomplete []guidellmRequest `json:"incomplete"`
		} `json:"requests"`
	} `json:"benchmarks"`
}

type guidellmRequest struct {
	ResponseID string `json:"response_id"`
	Info       struct {
		Timings struct {
			RequestStart *float64 `json:"request_start"`
			FirstToken   *float64 `json:"first_token_iteration"`
			LastToken    *float64 `json:"last_token_iteration"`
			RequestEnd   *float64 `json:"request_end"`
			Iterations   int      `json:"token_iterations"`
		} `json:"timings"`
	} `json:"info"`
	PromptTokens *int `json:"prompt_tokens"`
	OutputTokens *int `json:"output_tokens"`
}

func (g *guidellmRequest) request(ok bool) (Request, bool) {
	t := g.Info.Timings
	if t.RequestStart == nil || t.RequestEnd == nil {
		return Request{}, false
	}
	r := Request{ID: g.ResponseID, OK: ok, Start: *t.RequestStart, HasStart: true, Latency: *t.RequestEnd - *t.RequestStart}
	if t.FirstToken != nil {
		r.TTFT = *t.FirstToken - *t.RequestStart
	}
	if t.LastToken != nil {
		r.LastToken = *t.LastToken - *t.RequestStart
	}
	if g.PromptTokens != nil {
		r.PromptLen = *g.PromptTokens
	}
	if g.OutputTokens != nil {
		r.OutputLen = *g.OutputTokens
	} else {
		r.OutputLen = t.Iterations // GuideLLM's own fallback: one token an iteration
	}
	if !finite(r.Start) || !finite(r.Latency) || !finite(r.TTFT) || !finite(r.LastToken) {
		return Request{}, false
	}
	r.OK = r.OK && r.TTFT > 0
	return r, true
}

// guidellmMetrics maps GuideLLM's metric names to llmbench's, with each
// one's unit.
var guidellmMetrics = []struct {
	name, metric string
	scale        float64
}{
	{"time_to_first_token_ms", "ttft", 1e-3},
	{"inter_token_latency_ms", "itl", 1e-3},
	{"time_per_output_token_ms", "tpot", 1e-3},
	{"request_latency", "e2e", 1},
}

func readGuideLLM(path string, b []byte) ([]Result, error) {
	var rep guidellmReport
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, err
	}
	if len(rep.Benchmarks) == 0 {
		return nil, fmt.Errorf("no benchmark in it")
	}
	var out []Result
	for i, bm := range rep.Benchmarks {
		res := Result{Tool: GuideLLM, Path: path, Label: GuideLLM, Defs: guidellmDefs}
		if len(rep.Benchmarks) > 1 {
			res.Label = fmt.Sprintf("%s #%d", GuideLLM, i+1)
		}
		for _, m := range guidellmMetrics {
			guidellmFigures(&res, m.metric, m.scale, bm.Metrics[m.name])
		}
		for _, group := range []struct {
			reqs []guidellmRequest
			ok   bool
		}{{bm.Requests.Successful, true}, {bm.Requests.Errored, false}, {bm.Requests.Incomplete, false}} {
			for j := range group.reqs {
				if r, ok := group.reqs[j].request(group.ok); ok {
					res.Requests = append(res.Requests, r)
				}
			}
			if group.ok {
				res.Completed = len(group.reqs)
			} else {
				res.Failed += len(group.reqs)
			}
		}
		out = append(out, res)
	}
	return out, nil
}

func guidellmFigures(res *Result, metric string, scale float64, raw json.RawMessage) {
	var byStatus struct {
		Successful *struct {
			Mean        *float64           `json:"mean"`
			Median      *float64           `json:"median"`
			Percentiles map[string]float64 `json:"percentiles"`
		} `json:"successful"`
	}
	if json.Unmarshal(raw, &byStatus) != nil || byStatus.Successful == nil {
		return
	}
	s := byStatus.Successful
	if s.Mean != nil {
		res.setReported(metric, "mean", *s.Mean, scale)
	}
	if s.Median != nil {
		res.setReported(metric, "p50", *s.Median, scale)
	}
	for _, p := range []string{"p50", "p90", "p99"} {
		if v, ok := s.Percentiles[p]; ok {
			res.setReported(metric, p, v, scale)
		}
	}
}
