package peers

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/peers/peerstest"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestReaders reads each tool's file in testdata and checks what was read:
// the tool, its counts, the per-request data and the reported figures in
// seconds. The files follow each writer's code (see testdata/README.md).
func TestReaders(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		path              string
		results           int
		tool              string
		completed, failed int
		requests          int // of the last result; -1 = none kept
		firstTTFT         float64
		firstGaps         int
		reported          [3]any // metric, stat, seconds
	}{
		{"testdata/sglang.jsonl", 2, SGLang, 3, 0, 4, 0.01, 3, [3]any{"e2e", "p99", 0.0498}},
		{"testdata/aiperf/profile_export.jsonl", 1, AIPerf, 2, 1, 3, 0.010, 3, [3]any{"itl", "p90", 0.019}},
		{"testdata/aiperf/profile_export_aiperf.json", 1, AIPerf, 2, 1, 3, 0.010, 3, [3]any{"ttft", "mean", 0.015}},
		{"testdata/guidellm/benchmarks.json", 1, GuideLLM, 2, 1, 3, 0.010, 0, [3]any{"e2e", "p90", 0.09}},
		{"testdata/vllm-detailed.json", 1, VLLM, 3, 1, 4, 0.012, 3, [3]any{"itl", "p50", 0.005}},
		{"testdata/vllm.json", 1, VLLM, 3, 1, -1, 0, 0, [3]any{"itl", "p50", 0.005}},
	} {
		if !IsResult(c.path) {
			t.Errorf("%s: not recognised as a result", c.path)
			continue
		}
		res, err := Read(c.path)
		if err != nil || len(res) != c.results {
			t.Errorf("%s: %d results, %v", c.path, len(res), err)
			continue
		}
		r := res[len(res)-1]
		if r.Tool != c.tool || r.Completed != c.completed || r.Failed != c.failed {
			t.Errorf("%s: %s %d completed %d failed, want %s %d %d", c.path, r.Tool, r.Completed, r.Failed, c.tool, c.completed, c.failed)
		}
		if c.requests < 0 {
			if r.Requests != nil {
				t.Errorf("%s: per-request data read from a file without it", c.path)
			}
		} else if len(r.Requests) != c.requests || !near(r.Requests[0].TTFT, c.firstTTFT) || len(r.Requests[0].Gaps) != c.firstGaps {
			t.Errorf("%s: %d requests, first %+v", c.path, len(r.Requests), r.Requests)
		}
		if v, ok := r.Reported[c.reported[0].(string)][c.reported[1].(string)]; !ok || !near(v, c.reported[2].(float64)) {
			t.Errorf("%s: reported %s %s = %v (%v), want %v", c.path, c.reported[0], c.reported[1], v, ok, c.reported[2])
		}
	}
}

// TestOwnFiguresRecomputed: each tool's figure, recomputed from its own
// per-request data under its own definitions and estimator, is what it
// reported: the readers and the definitions model the writers.
func TestOwnFiguresRecomputed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ path, metric, stat string }{
		{"testdata/sglang.jsonl", "ttft", "p99"},
		{"testdata/sglang.jsonl", "itl", "mean"},
		{"testdata/aiperf/profile_export.jsonl", "itl", "p99"},
		{"testdata/aiperf/profile_export.jsonl", "e2e", "p90"},
		{"testdata/guidellm/benchmarks.json", "itl", "p90"},
		{"testdata/guidellm/benchmarks.json", "tpot", "mean"},
		{"testdata/guidellm/benchmarks.json", "ttft", "p50"},
		{"testdata/vllm-detailed.json", "itl", "p99"},
		{"testdata/vllm-detailed.json", "tpot", "p90"},
	} {
		res, err := Read(c.path)
		if err != nil {
			t.Fatal(err)
		}
		r := res[len(res)-1]
		ex := Explain(r, "", nil, nil)
		for _, l := range ex.Lines {
			if l.Metric != c.metric || l.Stat != c.stat {
				continue
			}
			got, _ := statOf(c.stat, peerValues(r, c.metric), r.Defs.quantile)
			if want := r.Reported[c.metric][c.stat]; !near(got, want) {
				t.Errorf("%s %s %s: recomputed %g, reported %g", c.path, c.metric, c.stat, got, want)
			}
			if l.ToolUnderLlmbench == nil && c.path != "testdata/guidellm/benchmarks.json" {
				t.Errorf("%s: no figure under llmbench's definitions", c.path)
			}
		}
	}
}

// TestDefinitions: each tool's ITL and TPOT against llmbench's on the same
// request: 13 tokens in chunks of 1, 4, 4, 4, 10 ms apart, first at 20 ms,
// the stream ending 1 ms after the last chunk.
func TestDefinitions(t *testing.T) {
	t.Parallel()
	req := Request{OK: true, TTFT: 0.020, Gaps: []float64{0.010, 0.010, 0.010}, Latency: 0.050, OutputLen: 13}
	req.LastToken, _ = req.lastToken()
	recs := peerRecords([]Request{req})
	if got := llmbenchValues(recs, "itl"); len(got) != 12 || !near(got[0], 0.0025) {
		t.Errorf("llmbench ITL %v, want 12 gaps of 2.5 ms", got)
	}
	for _, c := range []struct {
		defs      Defs
		itl, tpot []float64
	}{
		{vllmDefs, []float64{0.010, 0.010, 0.010}, []float64{0.030 / 12}},
		{aiperfDefs, []float64{0.030 / 12}, nil},
		{guidellmDefs, []float64{0.030 / 12}, []float64{0.050 / 13}},
	} {
		res := Result{Defs: c.defs, Requests: []Request{req}}
		if got := peerValues(res, "itl"); !equalish(got, c.itl) {
			t.Errorf("%s: ITL %v, want %v", c.defs.ITL, got, c.itl)
		}
		if got := peerValues(res, "tpot"); !equalish(got, c.tpot) {
			t.Errorf("%s: TPOT %v, want %v", c.defs.TPOT, got, c.tpot)
		}
	}
}

func equalish(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !near(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestEstimators: numpy's linear percentile, GuideLLM's inverse CDF and
// llmbench's (gonum's LinInterp) on 1..10.
func TestEstimators(t *testing.T) {
	t.Parallel()
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		name string
		q    func(float64, []float64) float64
		p    float64
		want float64
	}{
		{"numpy p50", numpyPercentile, 0.5, 5.5},
		{"numpy p99", numpyPercentile, 0.99, 9.91},
		{"inverse cdf p50", inverseCDF, 0.5, 5},
		{"inverse cdf p99", inverseCDF, 0.99, 10},
		{"llmbench p50", llmbenchQuantile, 0.5, 5},
		{"llmbench p99", llmbenchQuantile, 0.99, 9.9},
	} {
		if got := c.q(c.p, xs); !near(got, c.want) {
			t.Errorf("%s = %g, want %g", c.name, got, c.want)
		}
	}
}

// TestPythonJSON: bare NaN and Infinity outside strings become null,
// inside strings they stay.
func TestPythonJSON(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"a": Infinity, "b": -Infinity, "c": NaN}`: `{"a": null, "b": null, "c": null}`,
		`{"a": "NaN \" Infinity", "b": 1}`:          `{"a": "NaN \" Infinity", "b": 1}`,
		`[NaN]`:                                     `[null]`,
	} {
		if got := string(pythonJSON([]byte(in))); got != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
}

// testdataRecords are the records the vLLM testdata files are written
// from: four requests, one failed, 13 tokens in chunks of 1, 4, 4, 4.
func testdataRecords() []client.Record {
	var recs []client.Record
	for i := range 4 {
		base := time.Duration(i+1) * 100 * time.Millisecond
		r := client.Record{Index: i, Sent: base, Wrote: base + time.Millisecond, PromptTokens: 16, OutputTokens: 13}
		if i == 3 {
			r.End, r.ErrorClass, r.Error = base+2*time.Millisecond, client.ErrConnect, "connection refused"
			recs = append(recs, r)
			continue
		}
		r.FirstToken = base + 12*time.Millisecond
		for k, tok := range []int32{1, 4, 4, 4} {
			r.Chunks = append(r.Chunks, client.Chunk{At: r.FirstToken + time.Duration(k*(4+i))*time.Millisecond, Tokens: tok})
		}
		r.End = r.Chunks[3].At + time.Millisecond
		recs = append(recs, r)
	}
	return recs
}

// TestVLLMTestdataIsTheWriters: testdata/vllm*.json are what
// peerstest.VLLMResult writes for testdataRecords (regenerate with
// LLMBENCH_UPDATE_TESTDATA=1).
func TestVLLMTestdataIsTheWriters(t *testing.T) {
	t.Parallel()
	for name, detailed := range map[string]bool{"vllm-detailed.json": true, "vllm.json": false} {
		want := peerstest.VLLMResult(testdataRecords(), 1, detailed)
		path := filepath.Join("testdata", name)
		if os.Getenv("LLMBENCH_UPDATE_TESTDATA") != "" {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != string(want) {
			t.Errorf("%s differs from the writer's output (%v)", path, err)
		}
	}
}

// TestNotResults: llmbench's own files and other JSON are not taken for a
// peer's result.
func TestNotResults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"requests.jsonl": `{"id":"a","index":0,"sent_ns":1,"end_ns":2,"prompt_tokens":3,"output_tokens":4}` + "\n",
		"summary.json":   `{"schema":"llmbench.summary/v1","run":{},"client":{}}`,
		"empty.json":     ``,
		"list.json":      `[1, 2]`,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if IsResult(p) {
			t.Errorf("%s taken for a peer's result", name)
		}
	}
	if IsResult(dir) {
		t.Error("a directory taken for a peer's result")
	}
}
