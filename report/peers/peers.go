// Package peers reads the result files other benchmark tools write (vLLM's
// `vllm bench serve --save-result`, SGLang's bench_serving JSONL, AIPerf's
// profile export, GuideLLM's benchmarks.json), each modelled on the code
// that writes it, and explains why such a result and an llmbench run
// disagree: where the file keeps per-request data, every metric is
// recomputed under llmbench's definitions (docs/decisions/0002) and each
// difference is split into its definitional parts (which requests count,
// the quantile estimator, per-chunk vs per-token ITL, where TTFT starts and
// E2E ends) and the measurement part that remains (decision 2220).
package peers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/llmbench-org/llmbench/internal/inputfile"
)

// Tools this package reads, as results are labelled.
const (
	VLLM     = "vllm"
	SGLang   = "sglang"
	AIPerf   = "aiperf"
	GuideLLM = "guidellm"
)

// Metrics every result is read for, by llmbench's names.
var Metrics = []string{"ttft", "itl", "tpot", "e2e"}

// Stats every metric is read for.
var Stats = []string{"mean", "p50", "p90", "p99"}

// Result is one benchmark of a peer's result file.
type Result struct {
	Tool  string `json:"tool"`
	Path  string `json:"path"`
	Label string `json:"label"` // the tool, and the benchmark's place in a file that holds several
	// Reported are the figures the tool computed itself, in seconds, by
	// metric then statistic; a statistic the file does not give is absent.
	Reported map[string]map[string]float64 `json:"reported"`
	// Completed and Failed are the tool's own counts.
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	// Requests are the per-request data, nil when the file keeps none
	// (vLLM and SGLang without --save-detailed / --output-details, AIPerf's
	// aggregate file alone).
	Requests []Request `json:"-"`
	// Defs is how the tool defines what it reports.
	Defs Defs `json:"definitions"`
}

// Request is one request as a peer recorded it. Times are seconds; TTFT,
// LastToken and Latency count from the tool's own start of the request.
type Request struct {
	OK bool
	// ID is the request's id as the file keeps it: AIPerf's x_request_id
	// (sent as X-Request-ID), GuideLLM's response_id (the engine's id of its
	// response), vLLM's request_id_prefix and the request's index (when the
	// result names the prefix, e.g. --metadata request_id_prefix=…); ""
	// when the file keeps none.
	ID string
	// Start is when the tool started the request, on its own clock (vLLM's
	// perf_counter, AIPerf's epoch); HasStart says whether the file keeps it.
	Start    float64
	HasStart bool
	TTFT     float64
	// Gaps are the times between consecutive output chunks (per chunk: a
	// chunk of several tokens is one gap); nil when the file keeps none.
	Gaps []float64
	// LastToken is the last output chunk's time (0 unknown: derived from
	// TTFT and Gaps where those exist).
	LastToken float64
	Latency   float64
	PromptLen int
	OutputLen int
}

// lastToken is the last output chunk's time from the start, and whether it
// is known.
func (r *Request) lastToken() (float64, bool) {
	if r.LastToken > 0 {
		return r.LastToken, true
	}
	if r.Gaps == nil {
		return 0, false
	}
	t := r.TTFT
	for _, g := range r.Gaps {
		t += g
	}
	return t, true
}

// Defs are a tool's definitions, in words and in the switches the
// explanation needs.
type Defs struct {
	// StartsBeforeSend: the tool starts a request's clock before the request
	// is handed to its HTTP client (llmbench: at the last byte written).
	StartsBeforeSend bool `json:"starts_before_send"`
	// EndsAtLastChunk: the tool's E2E ends at the last output chunk
	// (llmbench: at the end of the stream).
	EndsAtLastChunk bool   `json:"ends_at_last_chunk"`
	ITL             string `json:"itl"`      // what the tool calls ITL, in words
	TPOT            string `json:"tpot"`     // what it calls TPOT ("" when it reports none)
	Quantile        string `json:"quantile"` // its quantile estimator
	Counts          string `json:"counts"`   // which requests its latencies count
	// itl and tpot compute the tool's per-request values; quantile is its
	// estimator.
	itl, tpot func(*Request) []float64
	quantile  func(p float64, sorted []float64) float64
}

// ToolITL is q's ITL as the tool defines it (Defs.ITL): the mean of its
// values for q, and false when the tool has none for q.
func (d Defs) ToolITL(q *Request) (float64, bool) {
	if d.itl == nil {
		return 0, false
	}
	vs := d.itl(q)
	if len(vs) == 0 {
		return 0, false
	}
	var sum float64
	for _, v := range vs {
		sum += v
	}
	return sum / float64(len(vs)), true
}

// maxResultBytes bounds a result file: a vLLM --save-detailed file keeps
// every generated text, so it is larger than a run's own files.
var maxResultBytes = inputfile.RunFile

// IsResult reports whether path is a peer's result file rather than an
// llmbench run: a regular file that one reader claims and reads.
func IsResult(path string) bool {
	_, err := Read(path)
	return err == nil
}

// Read reads a peer's result file: which tool wrote it is told by its name
// and shape (profile_export.jsonl and profile_export_aiperf.json are read
// together when both are in one directory).
func Read(path string) ([]Result, error) {
	b, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	read, err := detect(path, b)
	if err != nil {
		return nil, err
	}
	out, err := read(path, b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

type reader func(path string, b []byte) ([]Result, error)

// detect picks the reader for a file by its name, then its shape.
func detect(path string, b []byte) (reader, error) {
	base := filepath.Base(path)
	trimmed := bytes.TrimSpace(b)
	switch {
	case len(trimmed) == 0:
		return nil, errors.New(path + ": empty")
	case strings.HasSuffix(base, ".jsonl") && bytes.Contains(firstLine(trimmed), []byte(`"metadata"`)):
		return readAIPerfRecords, nil
	case strings.HasSuffix(base, ".jsonl"):
		return readSGLang, nil
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(trimmed, &top) != nil {
		return nil, errors.New(path + ": not a result file llmbench reads (vLLM, SGLang, AIPerf or GuideLLM)")
	}
	switch {
	case top["benchmarks"] != nil:
		return readGuideLLM, nil
	case top["time_to_first_token"] != nil || top["request_latency"] != nil || top["input_config"] != nil:
		return readAIPerfAggregate, nil
	case top["completed"] != nil && (top["mean_ttft_ms"] != nil || top["mean_e2el_ms"] != nil || top["ttfts"] != nil):
		if top["mean_e2e_latency_ms"] != nil {
			return readSGLang, nil
		}
		return readVLLM, nil
	}
	return nil, errors.New(path + ": not a result file llmbench reads (vLLM, SGLang, AIPerf or GuideLLM)")
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// setReported records a figure the tool reported, converting it to
// seconds; NaN and infinities are dropped.
func (r *Result) setReported(metric, stat string, v, scale float64) {
	if !finite(v) {
		return
	}
	if r.Reported == nil {
		r.Reported = map[string]map[string]float64{}
	}
	if r.Reported[metric] == nil {
		r.Reported[metric] = map[string]float64{}
	}
	r.Reported[metric][stat] = v * scale
}

// readBounded reads a result file (at most maxResultBytes), Python's bare
// NaN and Infinity made null.
func readBounded(path string) ([]byte, error) {
	b, err := inputfile.ReadAll(path, maxResultBytes)
	if err != nil {
		return nil, err
	}
	return pythonJSON(b), nil
}
