package gates

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/internal/bigrun"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
	"github.com/llmbench-org/llmbench/rundir"
)

// bigRunDir writes a generated run directory of n requests (phases
// warmup, not measured, then a and b).
func bigRunDir(t *testing.T, n, chunks int) string {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	spans, err := bigrun.Write(&buf, bigrun.Config{Requests: n, Chunks: chunks, Seed: 2, Phases: []string{"warmup", "a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.RequestsFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	meta := rundir.RunMeta{ID: "big", Scenario: "big", StartedAt: start, Ended: start.Add(time.Hour)}
	for i, sp := range spans {
		meta.Phases = append(meta.Phases, rundir.PhaseMeta{Name: sp.Name, Measured: i > 0, Start: sp.Start, End: sp.End})
	}
	b, _ := json.Marshal(meta)
	if err := os.WriteFile(filepath.Join(dir, rundir.RunFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A run read without its chunks resamples its deterministic sample of
// requests for ITL intervals: as many requests as the sample holds, each
// with its ITLs, the same on every load, its quantiles close to the
// whole run's; and an ITL regression gate of a run against itself gets an
// interval around zero.
func TestITLIntervalFromTheSample(t *testing.T) {
	t.Parallel()
	dir := bigRunDir(t, 2*chunkdigest.SampleSize+3000, 8)
	run, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Digest == nil || len(run.Records) == 0 || run.Records[0].Chunks != nil {
		t.Fatal("the run was not read in one pass without its chunks")
	}
	m := vocabulary["client.itl.p50"]
	s := run.samplesOf(m)
	if len(s.sizes) != chunkdigest.SampleSize {
		t.Fatalf("%d requests sampled, want %d", len(s.sizes), chunkdigest.SampleSize)
	}
	for _, k := range s.sizes {
		if k < 7 { // 8 chunks: 7 gaps, more with chunks of two tokens
			t.Fatalf("a sampled request has %d ITLs", k)
		}
	}
	again, _ := LoadRun(dir)
	if !reflect.DeepEqual(again.samplesOf(m), s) {
		t.Error("the sample differs between two loads")
	}
	ones := make([]int, len(s.sizes))
	for i := range ones {
		ones[i] = 1
	}
	whole := run.Summary.Client.Latency.ITL.P50
	if got := s.statistic(0.5, false, ones); math.Abs(got-whole) > 0.05*whole {
		t.Errorf("sample's ITL p50 %g, the run's %g", got, whole)
	}
	// A phase's sample holds that phase's requests only.
	if ph := run.samplesOf(metric{family: itlSamples, p: 0.5, phase: "a"}); len(ph.sizes) == 0 || len(ph.sizes) > chunkdigest.SampleSize {
		t.Errorf("phase a: %d requests sampled", len(ph.sizes))
	}
	gs := mustParse(t, "client.itl.p50 regression < 5%")
	res := gs.EvaluateSides(Side{run}, Side{again}, requestLevel)
	if len(res) != 1 || res[0].Interval == nil || res[0].Interval[0] > 0 || res[0].Interval[1] < 0 || res[0].Status != Pass {
		t.Errorf("against itself: %+v", res)
	}
}
