package rundir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/scrape/otlp"
)

// gpuShard writes shard i of 2, started offset after the first, against an
// engine of kind: its phase's GPU boundary scrapes and one scrape between,
// of target, its spans, and its phase's cache.
func gpuShard(t *testing.T, root string, i int, kind, target string, offset time.Duration, spans []otlp.Span, cache *PhaseCache) string {
	t.Helper()
	dir := filepath.Join(root, "shard"+string(rune('0'+i)))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	row := func(at time.Duration, energy float64) scrape.Row {
		return scrape.Row{Target: target, At: at, OK: true, Snapshot: &scrape.Snapshot{Dialect: scrape.DCGM,
			Counters: map[scrape.Concept]float64{scrape.GPUEnergy: energy}}}
	}
	rows := []scrape.Row{row(time.Second, 1000+float64(i)), row(5*time.Second, 1500+float64(i)), row(11*time.Second, 2000+float64(i))}
	meta := RunMeta{ID: filepath.Base(dir), Scenario: "s", Seed: 1, Shard: i, Shards: 2, StartedAt: time.Unix(1700000000, 0).Add(offset).UTC(),
		Ended: time.Unix(1700000020, 0).UTC(), Engine: EngineMeta{Kind: kind},
		Phases: []PhaseMeta{{Name: "main", Measured: true, Start: time.Second, End: 11 * time.Second,
			GPUBefore: rows[:1], GPUAfter: rows[2:], Cache: cache}}}
	b, _ := json.Marshal(meta)
	write := func(name string, lines []any) {
		var sb strings.Builder
		for _, l := range lines {
			b, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			sb.Write(append(b, '\n'))
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, RunFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	write(RequestsFile, []any{})
	write(GPUFile, []any{rows[0], rows[1], rows[2]})
	if spans != nil {
		var ls []any
		for _, s := range spans {
			ls = append(ls, s)
		}
		write(SpansFile, ls)
	}
	return dir
}

// TestMergeGPUAndSpans: a merge keeps each shard's own GPU exporter (its
// built-in engine's) and adds them up, keeps one shard's scrapes of an
// exporter every shard scraped, shifts rows and boundaries onto the merged
// clock; it merges the spans in start order, a span two receivers got
// once; a cold phase one shard could not reset says so.
func TestMergeGPUAndSpans(t *testing.T) {
	t.Parallel()
	span := func(trace string, start int64) otlp.Span {
		return otlp.Span{TraceID: trace, SpanID: "00000000000000" + trace[:2], Name: "llm_request", Start: start, End: start + 5}
	}
	cold := func(reset string) *PhaseCache { return &PhaseCache{Mode: "cold", Reset: reset} }
	const local = "http://127.0.0.1:8000/dcgm/metrics"
	const shared = "http://10.0.0.5:9400/metrics"

	root := t.TempDir()
	a := gpuShard(t, root, 0, "sim", local, 0, []otlp.Span{span("aa01", 30), span("aa03", 90)}, cold("ok"))
	b := gpuShard(t, root, 1, "sim", local, 2*time.Second, []otlp.Span{span("bb02", 60), span("aa03", 90)}, cold("POST /flush_cache: HTTP 401 unauthorized"))
	out := filepath.Join(t.TempDir(), "own")
	if err := Merge(out, []string{a, b}); err != nil {
		t.Fatal(err)
	}
	m, err := ReadMeta(out)
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadGPURows(out)
	if err != nil {
		t.Fatal(err)
	}
	ph := m.Phases[0]
	if len(rows) != 6 || len(ph.GPUBefore) != 2 || len(ph.GPUAfter) != 2 || ph.GPUBefore[0].Target == ph.GPUBefore[1].Target {
		t.Fatalf("own exporters: %d rows, boundaries %+v / %+v", len(rows), ph.GPUBefore, ph.GPUAfter)
	}
	for _, r := range append(ph.GPUBefore, ph.GPUAfter...) {
		shard1 := strings.Contains(r.Target, "shard 1")
		if want := map[bool]time.Duration{false: 0, true: 2 * time.Second}[shard1]; r.At != want+time.Second && r.At != want+11*time.Second {
			t.Errorf("boundary %s at %v: not shifted by %v", r.Target, r.At, want)
		}
	}
	if !strings.Contains(strings.Join(m.Engine.Notes, "\n"), "2 distinct GPU exporters, added up") {
		t.Errorf("notes %q", m.Engine.Notes)
	}
	if c := ph.Cache; c == nil || c.Mode != "cold" || c.Reset != "shard 1: POST /flush_cache: HTTP 401 unauthorized" {
		t.Errorf("cache %+v", ph.Cache)
	}
	spans, _, err := ReadSpans(out)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range spans {
		ids = append(ids, s.TraceID)
	}
	if strings.Join(ids, " ") != "aa01 bb02 aa03" {
		t.Errorf("merged spans %v, want each once in start order", ids)
	}

	// One exporter both shards scraped: one shard's rows and boundaries.
	root = t.TempDir()
	a = gpuShard(t, root, 0, "external", shared, 0, nil, nil)
	b = gpuShard(t, root, 1, "external", shared, time.Second, nil, nil)
	out = filepath.Join(t.TempDir(), "shared")
	if err := Merge(out, []string{a, b}); err != nil {
		t.Fatal(err)
	}
	m, _ = ReadMeta(out)
	rows, _, _ = ReadGPURows(out)
	ph = m.Phases[0]
	if len(rows) != 3 || len(ph.GPUBefore) != 1 || len(ph.GPUAfter) != 1 || ph.GPUBefore[0].Target != shared ||
		ph.GPUBefore[0].Snapshot.Counters[scrape.GPUEnergy] != rows[0].Snapshot.Counters[scrape.GPUEnergy] {
		t.Fatalf("shared exporter: rows %+v, boundaries %+v", rows, ph.GPUBefore)
	}
	if ph.Cache != nil {
		t.Errorf("a run that said nothing of the cache: %+v", ph.Cache)
	}
	if _, err := os.Stat(filepath.Join(out, SpansFile)); !os.IsNotExist(err) {
		t.Errorf("spans.jsonl without spans: %v", err)
	}
	if !strings.Contains(strings.Join(m.Engine.Notes, "\n"), "GPU exporter "+shared+", scraped by shards 0, 1") {
		t.Errorf("notes %q", m.Engine.Notes)
	}
}
