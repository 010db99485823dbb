package workload

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func addTestdata(f *testing.F, pattern string) {
	names, _ := filepath.Glob(filepath.Join("testdata", pattern))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err == nil {
			f.Add(data)
		}
	}
}

func FuzzParseTrace(f *testing.F) {
	addTestdata(f, "*.jsonl")
	addTestdata(f, "*.csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []string{"mooncake", "azure", "burstgpt"} {
			rows, _, err := parseTrace(format, "f", bytes.NewReader(data))
			if err != nil {
				if !strings.HasPrefix(err.Error(), "f") {
					t.Fatalf("%s: error does not name the file: %v", format, err)
				}
				continue
			}
			for i, r := range rows {
				if r.input < 1 || r.output < 1 || r.at < 0 || (i > 0 && r.at < rows[i-1].at) || (i == 0 && r.at != 0) {
					t.Fatalf("%s: row %d is %+v", format, i, r)
				}
			}
			ds := &traceRows{seed: 1, rows: rows, blockSize: 3}
			if len(rows[0].hashIDs) < 50 && rows[0].input < 10000 {
				msgs, tokens, _ := ds.request(0)
				if CountTokens(msgs) != tokens {
					t.Fatalf("%s: prompt of %d words for %d tokens", format, CountTokens(msgs), tokens)
				}
			}
		}
	})
}

func FuzzParseShareGPT(f *testing.F) {
	addTestdata(f, "*.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, need := range []bool{true, false} {
			list, _, err := parseShareGPT("f", bytes.NewReader(data), need)
			if err != nil {
				continue
			}
			for _, r := range list {
				if r.tokens < 1 || CountTokens(r.msgs) != r.tokens || (need && r.maxTokens < 1) {
					t.Fatalf("record %+v", r)
				}
			}
		}
	})
}

func FuzzParseJSONL(f *testing.F) {
	addTestdata(f, "prompts*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		list, err := parseJSONL("f", bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, r := range list {
			if r.tokens < 1 || CountTokens(r.msgs) != r.tokens || r.maxTokens < 0 {
				t.Fatalf("record %+v", r)
			}
		}
	})
}

func FuzzParseHistogram(f *testing.F) {
	addTestdata(f, "*.csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := parseHistogram("f", bytes.NewReader(data))
		if err != nil {
			return
		}
		rng := rand.New(rand.NewPCG(1, 1))
		for range 20 {
			v := h.draw(rng)
			ok := false
			for i := range h.lo {
				ok = ok || (v >= h.lo[i] && v <= h.hi[i])
			}
			if !ok || v < 1 {
				t.Fatalf("drew %d outside every bin", v)
			}
		}
	})
}
