package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report/sentload"
)

// TestExportWorkloadRoundTrip: a run's requests exported as a Mooncake
// trace and replayed by llmbench send the same load — as many requests,
// the same prompt and output lengths, the same schedule (its gaps within
// the trace's millisecond) — and exported as JSONL, read by llmbench's
// jsonl dataset, as many requests with the same max_tokens.
func TestExportWorkloadRoundTrip(t *testing.T) {
	t.Parallel()
	runs, work := t.TempDir(), t.TempDir()
	origin := runNamed(t, runs, "name: orig\nseed: 5\nengine: {kind: sim, preset: tiny}\nworkload: {rate: 40, requests: 30, prompt_tokens: {dist: uniform, min: 8, max: 600}, output_tokens: {dist: uniform, min: 2, max: 9}}\n", "orig")

	trace := filepath.Join(work, "trace.jsonl")
	cio, _, stderr := testIO(nil)
	if code := execute(context.Background(), cio, []string{"export-workload", "--format", "mooncake", "-o", trace, origin}); code != exitOK {
		t.Fatalf("export-workload: exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "30 requests written") {
		t.Errorf("export-workload says %q", stderr.String())
	}
	checkMooncake(t, trace)
	replay := runNamed(t, runs, "name: replay\nengine: {kind: sim, preset: tiny}\nworkload:\n  trace: {format: mooncake, path: "+trace+"}\n", "replay")

	a, b := loadOf(t, origin), loadOf(t, replay)
	v := sentload.Same(a, b)
	for _, d := range v.Differs {
		if !strings.HasPrefix(d, "gaps between sends") || lateArrivals(t, origin)+lateArrivals(t, replay) == 0 {
			t.Errorf("replay of the export: %s", d)
		}
	}
	if a.PlannedGaps == nil || b.PlannedGaps == nil {
		t.Errorf("planned gaps missing: %+v %+v", a.PlannedGaps, b.PlannedGaps)
	}

	jsonl := filepath.Join(work, "prompts.jsonl")
	cio, _, stderr = testIO(nil)
	if code := execute(context.Background(), cio, []string{"export-workload", "--format", "jsonl", "-o", jsonl, origin}); code != exitOK {
		t.Fatalf("export-workload jsonl: exit %d\n%s", code, stderr.String())
	}
	fromJSONL := runNamed(t, runs, "name: fromjsonl\nengine: {kind: sim, preset: tiny}\nworkload:\n  concurrency: 4\n  requests: 30\n  dataset: {type: jsonl, path: "+jsonl+"}\n", "fromjsonl")
	if c := loadOf(t, fromJSONL); c.Requests != a.Requests || c.OutputTokens != a.OutputTokens {
		t.Errorf("jsonl replay: %d requests, outputs %+v; the original %d, %+v", c.Requests, c.OutputTokens, a.Requests, a.OutputTokens)
	}

	cio, _, stderr = testIO(nil)
	if code := execute(context.Background(), cio, []string{"export-workload", "--format", "csv", origin}); code == exitOK || !strings.Contains(stderr.String(), "--format") {
		t.Errorf("--format csv: exit %d, %s", code, stderr.String())
	}
}

// checkMooncake: every line has the four fields, timestamps do not go
// back, and hash_ids cover input_length in 512-token blocks, no id twice.
func checkMooncake(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[int64]bool{}
	prev := int64(-1)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var row struct {
			Timestamp    *int64  `json:"timestamp"`
			InputLength  *int    `json:"input_length"`
			OutputLength *int    `json:"output_length"`
			HashIDs      []int64 `json:"hash_ids"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil || row.Timestamp == nil || row.InputLength == nil || row.OutputLength == nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if *row.Timestamp < prev || len(row.HashIDs) != (*row.InputLength+511)/512 {
			t.Errorf("line %q: timestamp before %d or hash_ids not one per 512 tokens", sc.Text(), prev)
		}
		prev = *row.Timestamp
		for _, h := range row.HashIDs {
			if seen[h] {
				t.Errorf("hash id %d twice", h)
			}
			seen[h] = true
		}
	}
}

// runNamed runs the scenario yaml and returns its run directory.
func runNamed(t *testing.T, runs, yaml, name string) string {
	t.Helper()
	path := writeScenario(t, yaml)
	cio, _, stderr := testIO(nil)
	if code := execute(context.Background(), cio, []string{"run", "--view", "plain", "--output-dir", runs, path}); code != exitOK {
		t.Fatalf("run %s: exit %d\n%s", name, code, stderr.String())
	}
	m, _ := filepath.Glob(filepath.Join(runs, "*-"+name))
	if len(m) != 1 {
		t.Fatalf("run directories %v", m)
	}
	return m[0]
}

func loadOf(t *testing.T, dir string) sentload.Fingerprint {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Load *sentload.Fingerprint `json:"load"`
	}
	if err := json.Unmarshal(b, &s); err != nil || s.Load == nil {
		t.Fatalf("%s: no load fingerprint (%v)", dir, err)
	}
	return *s.Load
}
