package sim

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

func TestTruthJSONLAndCap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e, ep := startEngine(t, Config{TruthPath: dir + "/truth.jsonl", StepTruthPath: dir + "/steps.jsonl", MaxRequestTruth: 2})
	for _, id := range []string{"j1", "j2", "j3"} {
		if rs := readRaw(t, ep.BaseURL, id, nil); !rs.done {
			t.Fatalf("%s failed", id)
		}
	}
	if n := len(e.Truth()); n != 2 || e.TruthDropped() != 1 {
		t.Errorf("%d in memory, %d dropped; want 2 and 1", n, e.TruthDropped())
	}
	if err := e.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	lines := func(path string) []map[string]any {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var out []map[string]any
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			out = append(out, m)
		}
		return out
	}
	reqs := lines(dir + "/truth.jsonl")
	if len(reqs) != 3 || reqs[2]["id"] != "j3" || len(reqs[2]["token_flushes_ns"].([]any)) != 10 {
		t.Errorf("truth file: %d lines, last %v", len(reqs), reqs[len(reqs)-1])
	}
	if steps := lines(dir + "/steps.jsonl"); len(steps) < 30 {
		t.Errorf("steps file: %d lines for 3 requests of 10 tokens", len(steps))
	}
}
