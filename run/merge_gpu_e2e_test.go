package run

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// TestShardsMergeGPUAndSpans: two shards, each with its own built-in engine
// exporting its GPUs and its spans, merged: the merged run's energy is the
// two engines' added up (each shard's own, as each reported it), energy per
// token divides it by both shards' tokens, and every request joins its span.
func TestShardsMergeGPUAndSpans(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two load generators and two engines")
	}
	t.Parallel()
	path := writeScenario(t, `
name: shards-gpu
seed: 9
engine: {kind: sim, preset: tiny, dialect: vllm}
workload: {concurrency: 4, requests: 40, prompt_tokens: 32, output_tokens: 8}
scrape: {interval: 250ms, gpu: {}, otlp: {}}
`)
	root := t.TempDir()
	dirs := make([]string, 2)
	errs := make(chan error, 2)
	for i := range 2 {
		go func() {
			cio, _, stderr := testIO(nil)
			dir, err := runScenario(t.Context(), runOpts{scenario: path, runsDir: filepath.Join(root, fmt.Sprint(i)), output: "plain", shard: fmt.Sprintf("%d/2", i)}, cio)
			if err != nil {
				err = fmt.Errorf("shard %d: %w\n%s", i, err, stderr)
			}
			dirs[i] = dir
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var energy float64
	tokens, records := 0, 0
	for _, d := range dirs {
		s, err := report.Build(d)
		if err != nil {
			t.Fatal(err)
		}
		if s.GPU == nil || s.Timeline == nil {
			t.Fatalf("shard %s: GPU %+v, timeline %+v", d, s.GPU, s.Timeline)
		}
		energy += s.GPU.EnergyJ
		tokens += s.Client.Tokens.Output
		records += s.Timeline.Records
	}
	out := filepath.Join(t.TempDir(), "merged")
	if err := rundir.Merge(out, dirs); err != nil {
		t.Fatal(err)
	}
	s, err := report.Build(out)
	if err != nil {
		t.Fatal(err)
	}
	if s.GPU == nil || math.Abs(s.GPU.EnergyJ-energy) > 1e-6*energy || len(s.GPU.Devices) != 2 || s.GPU.GPUs != 2 {
		t.Fatalf("merged GPU %+v; the shards' energy %.3f J", s.GPU, energy)
	}
	if got := *s.GPU.EnergyPerOutputTokenJ; s.Client.Tokens.Output != tokens || math.Abs(got-energy/float64(tokens)) > 1e-9 {
		t.Errorf("merged energy per token %v, want %v J over %d tokens", got, energy/float64(tokens), tokens)
	}
	if tl := s.Timeline; tl == nil || tl.Records != records || tl.Joined != records || records != 40 {
		t.Errorf("merged timeline %+v, want all %d records joined", s.Timeline, records)
	}
}
