package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// aiperfRecord is one line of AIPerf's profile_export.jsonl
// (aiperf/common/models/record_models.py, MetricRecordInfo): the request's
// metadata, its metrics as {value, unit}, and an error when it failed.
type aiperfRecord struct {
	Metadata struct {
		XRequestID     string `json:"x_request_id"`
		BenchmarkPhase string `json:"benchmark_phase"`
		WasCancelled   bool   `json:"was_cancelled"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
		Unit  string          `json:"unit"`
	} `json:"metrics"`
	Error json.RawMessage `json:"error"`
}

// metric is one scalar metric as a duration; ok is false when absent.
func (a aiperfRecord) metric(name string) (time.Duration, bool, error) {
	m, ok := a.Metrics[name]
	if !ok {
		return 0, false, nil
	}
	var v float64
	if err := json.Unmarshal(m.Value, &v); err != nil {
		return 0, false, fmt.Errorf("metric %s: %w", name, err)
	}
	switch m.Unit {
	case "ms":
		return millis(v), true, nil
	case "ns":
		return time.Duration(v), true, nil
	case "s", "sec":
		return secs(v), true, nil
	}
	return 0, false, fmt.Errorf("metric %s: unit %q", name, m.Unit)
}

// readAIPerf: AIPerf sends X-Request-ID (metadata.x_request_id), so each
// record joins its truth. TTFT is time_to_first_token (the first response
// with content), E2E request_latency, ITL inter_token_latency: (latency −
// TTFT) ÷ (output tokens − 1), per token. Warm-up records are left out.
func readAIPerf(r io.Reader) ([]measured, error) {
	dec := json.NewDecoder(r)
	var out []measured
	for {
		var rec aiperfRecord
		if err := dec.Decode(&rec); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		if p := rec.Metadata.BenchmarkPhase; p != "" && p != "profiling" {
			continue
		}
		m := measured{id: rec.Metadata.XRequestID}
		m.ok = (len(rec.Error) == 0 || string(rec.Error) == "null") && !rec.Metadata.WasCancelled
		var err error
		if m.ttft, m.hasTTFT, err = rec.metric("time_to_first_token"); err != nil {
			return nil, err
		}
		if m.itl, m.hasITL, err = rec.metric("inter_token_latency"); err != nil {
			return nil, err
		}
		var has bool
		if m.e2e, has, err = rec.metric("request_latency"); err != nil {
			return nil, err
		}
		m.ok = m.ok && has
		out = append(out, m)
	}
}
