package peers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// AIPerf's profile export (aiperf/post_processors/record_export_results_
// processor.py, aiperf/exporters/json_exporter.py): profile_export.jsonl
// has one MetricRecordInfo per request — metadata (request_start_ns,
// request_end_ns, ...), metrics by tag as {value, unit} (time_to_first_token,
// request_latency, inter_chunk_latency: the gaps between chunks,
// inter_token_latency, output_sequence_length, input_sequence_length) and
// error (null on success); profile_export_aiperf.json has each metric's
// {unit, avg, p50, p90, p99, ...}. Its clock starts when the request is
// initiated (before the send); its ITL is per request, (request_latency −
// ttft) ÷ (osl − 1), which llmbench calls TPOT; it reports no TPOT.
var aiperfDefs = Defs{
	StartsBeforeSend: true,
	ITL:              "per request, (request_latency − ttft) ÷ (output tokens − 1): llmbench's TPOT",
	Quantile:         "numpy linear (rank p·(n−1))",
	Counts:           "successful requests",
	itl:              perRequestTPOT,
	quantile:         numpyPercentile,
}

// Files AIPerf writes into its artifact directory.
const (
	AIPerfRecordsFile   = "profile_export.jsonl"
	AIPerfAggregateFile = "profile_export_aiperf.json"
)

// aiperfTags maps AIPerf's metric tags to llmbench's names (what AIPerf
// calls them: its inter_token_latency is reported as ITL).
var aiperfTags = map[string]string{"time_to_first_token": "ttft", "inter_token_latency": "itl", "request_latency": "e2e"}

type aiperfValue struct {
	Value json.RawMessage `json:"value"`
	Unit  string          `json:"unit"`
}

type aiperfRecord struct {
	Metadata struct {
		XRequestID     string `json:"x_request_id"`
		BenchmarkPhase string `json:"benchmark_phase"`
		RequestStartNS *int64 `json:"request_start_ns"`
		RequestEndNS   *int64 `json:"request_end_ns"`
		WasCancelled   bool   `json:"was_cancelled"`
	} `json:"metadata"`
	Metrics map[string]aiperfValue `json:"metrics"`
	Error   json.RawMessage        `json:"error"`
}

// unitScale converts AIPerf's display units to seconds (1 for a unit that
// is not a time: tokens, counts).
func unitScale(unit string) float64 {
	switch unit {
	case "ms":
		return 1e-3
	case "us":
		return 1e-6
	case "ns":
		return 1e-9
	}
	return 1
}

func (v aiperfValue) number() (float64, bool) {
	var f float64
	if json.Unmarshal(v.Value, &f) != nil || !finite(f) {
		return 0, false
	}
	return f * unitScale(v.Unit), true
}

func (v aiperfValue) list() ([]float64, bool) {
	var fs []float64
	if json.Unmarshal(v.Value, &fs) != nil {
		return nil, false
	}
	s := unitScale(v.Unit)
	for i := range fs {
		if !finite(fs[i]) {
			return nil, false
		}
		fs[i] *= s
	}
	return fs, true
}

func (a *aiperfRecord) request() Request {
	r := Request{ID: a.Metadata.XRequestID}
	r.OK = (len(a.Error) == 0 || string(a.Error) == "null") && !a.Metadata.WasCancelled
	if a.Metadata.RequestStartNS != nil {
		r.Start, r.HasStart = float64(*a.Metadata.RequestStartNS)*1e-9, true
	}
	m := a.Metrics
	r.TTFT, _ = m["time_to_first_token"].number()
	r.Latency, _ = m["request_latency"].number()
	if g, ok := m["inter_chunk_latency"].list(); ok {
		r.Gaps = g
	}
	osl, ok := m["output_sequence_length"].number()
	if !ok {
		osl, _ = m["output_token_count"].number()
	}
	isl, _ := m["input_sequence_length"].number()
	r.OutputLen, r.PromptLen = int(osl), int(isl)
	if r.OK && r.TTFT <= 0 {
		r.OK = false // a record without a first token carries no latency to compare
	}
	return r
}

// readAIPerfRecords reads profile_export.jsonl, and the aggregate file
// beside it for the figures AIPerf reported.
func readAIPerfRecords(path string, b []byte) ([]Result, error) {
	res := Result{Tool: AIPerf, Path: path, Label: AIPerf, Defs: aiperfDefs, Requests: []Request{}}
	for i, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var rec aiperfRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if p := rec.Metadata.BenchmarkPhase; p != "" && p != "profiling" {
			continue // a warm-up's record: AIPerf's figures leave it out too
		}
		r := rec.request()
		if r.OK {
			res.Completed++
		} else {
			res.Failed++
		}
		res.Requests = append(res.Requests, r)
	}
	agg := filepath.Join(filepath.Dir(path), AIPerfAggregateFile)
	if ab, err := readIfThere(agg); err != nil {
		return nil, err
	} else if ab != nil {
		if err := aiperfFigures(&res, ab); err != nil {
			return nil, fmt.Errorf("%s: %w", agg, err)
		}
	}
	return []Result{res}, nil
}

// readAIPerfAggregate reads profile_export_aiperf.json, and the records
// beside it when they are there.
func readAIPerfAggregate(path string, b []byte) ([]Result, error) {
	recs := filepath.Join(filepath.Dir(path), AIPerfRecordsFile)
	if rb, err := readIfThere(recs); err != nil {
		return nil, err
	} else if rb != nil {
		return readAIPerfRecords(recs, rb)
	}
	res := Result{Tool: AIPerf, Path: path, Label: AIPerf, Defs: aiperfDefs}
	if err := aiperfFigures(&res, b); err != nil {
		return nil, err
	}
	return []Result{res}, nil
}

func aiperfFigures(res *Result, b []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return err
	}
	for tag, metric := range aiperfTags {
		var m map[string]json.RawMessage
		if json.Unmarshal(top[tag], &m) != nil {
			continue
		}
		var unit string
		_ = json.Unmarshal(m["unit"], &unit)
		for key, stat := range map[string]string{"avg": "mean", "p50": "p50", "p90": "p90", "p99": "p99"} {
			var v float64
			if json.Unmarshal(m[key], &v) == nil {
				res.setReported(metric, stat, v, unitScale(unit))
			}
		}
	}
	if res.Requests == nil {
		var rc map[string]json.RawMessage
		if json.Unmarshal(top["request_count"], &rc) == nil {
			var n float64
			if json.Unmarshal(rc["avg"], &n) == nil {
				res.Completed = int(n)
			}
		}
	}
	return nil
}

// readIfThere reads a file beside the one named, nil when it is absent.
func readIfThere(path string) ([]byte, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	return readBounded(path)
}
