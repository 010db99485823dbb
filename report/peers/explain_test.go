package peers

import (
	"math"
	"testing"
)

// resultFrom is a tool's result recorded from recs' own timings, as the
// tool's clock would have seen them: from the hand-over, to the tool's end.
func resultFrom(tool string, defs Defs) Result {
	res := Result{Tool: tool, Label: tool, Defs: defs}
	for _, r := range testdataRecords() {
		q := Request{OK: r.OK(), Start: r.Sent.Seconds(), HasStart: true, PromptLen: r.PromptTokens, OutputLen: r.OutputTokens}
		if q.OK {
			q.TTFT = (r.FirstToken - r.Sent).Seconds()
			last := r.Chunks[len(r.Chunks)-1].At
			q.LastToken = (last - r.Sent).Seconds()
			q.Latency = (r.End - r.Sent).Seconds()
			if defs.EndsAtLastChunk {
				q.Latency = q.LastToken
			}
			if tool != GuideLLM { // GuideLLM keeps no chunk times
				for i := 1; i < len(r.Chunks); i++ {
					q.Gaps = append(q.Gaps, (r.Chunks[i].At - r.Chunks[i-1].At).Seconds())
				}
			}
		}
		res.Requests = append(res.Requests, q)
	}
	return res
}

// TestExplainSameTimings: for every tool, a result recorded from a run's
// own timings differs from the run by definitions alone: the parts add up
// to the total and the measurement part is zero; vLLM's per-chunk ITL is
// explained by what the metric is, and every tool's clock starting at the
// hand-over by the 1 ms the records took to write.
func TestExplainSameTimings(t *testing.T) {
	t.Parallel()
	run := testdataRecords()
	for _, c := range []struct {
		tool string
		defs Defs
	}{{VLLM, vllmDefs}, {SGLang, sglangDefs}, {AIPerf, aiperfDefs}, {GuideLLM, guidellmDefs}} {
		ex := Explain(resultFrom(c.tool, c.defs), "run", run, nil)
		split := 0
		for _, l := range ex.Lines {
			if l.Measurement == nil {
				continue
			}
			split++
			if math.Abs(*l.Measurement) > 1e-9 {
				t.Errorf("%s %s %s: measurement %g, want 0", c.tool, l.Metric, l.Stat, *l.Measurement)
			}
			if d := *l.Total - *l.Definitional - *l.Measurement; math.Abs(d) > 1e-12 {
				t.Errorf("%s %s %s: parts off the total by %g", c.tool, l.Metric, l.Stat, d)
			}
			for _, p := range l.Parts {
				if p.Name == PartStart && l.Metric == "ttft" && l.Stat == "mean" && math.Abs(p.Seconds-0.001) > 1e-9 {
					t.Errorf("%s: the clock's start explains %g s of TTFT, want the 1 ms from hand-over to written", c.tool, p.Seconds)
				}
				if p.Name == PartMetric && c.tool == VLLM && l.Metric == "itl" && l.Stat == "mean" && p.Seconds < 0.003 {
					t.Errorf("vLLM ITL mean: the metric explains %g s, want its per-chunk gaps (≥ 4 ms) less per-token ones (~1.3 ms)", p.Seconds)
				}
			}
		}
		// GuideLLM keeps no chunk times: its ITL lines cannot be split;
		// AIPerf reports no TPOT.
		if want := map[string]int{GuideLLM: 12, AIPerf: 12}[c.tool]; want == 0 && split != 16 || want != 0 && split != want {
			t.Errorf("%s: %d lines split", c.tool, split)
		}
	}
}
