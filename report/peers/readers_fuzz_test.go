package peers

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead: no file makes a reader panic, and whatever it reads can be
// explained (beside no run) without panicking.
func FuzzRead(f *testing.F) {
	for _, p := range []string{"testdata/sglang.jsonl", "testdata/aiperf/profile_export.jsonl", "testdata/aiperf/profile_export_aiperf.json",
		"testdata/guidellm/benchmarks.json", "testdata/vllm-detailed.json", "testdata/vllm.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(filepath.Base(p), b)
	}
	f.Add("x.json", []byte(`{"completed": 1, "ttfts": [NaN], "itls": [[Infinity]], "input_lens": [1], "output_lens": [-3]}`))
	f.Add("x.jsonl", []byte(`{"metadata": {}, "metrics": {"inter_chunk_latency": {"value": [1e308, -1e308], "unit": "ms"}}}`))
	f.Fuzz(func(t *testing.T, name string, b []byte) {
		if filepath.Base(name) != name || name == "" || name == "." || name == ".." {
			return
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return
		}
		results, err := Read(path)
		if err != nil {
			return
		}
		for _, r := range results {
			Explain(r, "", nil, nil)
		}
	})
}
