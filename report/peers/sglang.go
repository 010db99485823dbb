package peers

import (
	"bytes"
	"fmt"
)

// SGLang's bench_serving appends one JSON object per benchmark to its
// --output-file (JSONL): vLLM's shape with `mean_e2e_latency_ms` for E2E,
// and with --output-details the same per-request lists.
func readSGLang(path string, b []byte) ([]Result, error) {
	var out []Result
	for i, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if !bytes.Contains(line, []byte(`"completed"`)) || !bytes.Contains(line, []byte(`"duration"`)) {
			return nil, fmt.Errorf("line %d: not a bench_serving result (no completed and duration)", i+1)
		}
		r, err := readVLLMObject(SGLang, path, line, sglangDefs)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no benchmark in it")
	}
	if len(out) > 1 {
		for i := range out {
			out[i].Label = fmt.Sprintf("%s #%d", SGLang, i+1)
		}
	}
	return out, nil
}
