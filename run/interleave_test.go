package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/rundir"
)

// TestInterleaveRunsABAB: an interleaved pair of 2 trials a side runs A1
// B1 A2 B2, each trial after the one before it has ended (the run.json
// clocks say so, not only the order Interleave reports), into the trial
// sets A/ and B/, each listing its own trials in order.
func TestInterleaveRunsABAB(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the built-in engine four times")
	}
	t.Parallel()
	const yaml = "name: %s\nengine: {kind: sim, preset: tiny}\nworkload: {concurrency: 2, requests: 4, prompt_tokens: 16, output_tokens: %d}\n"
	a := writeScenario(t, strings.Replace(strings.Replace(yaml, "%s", "side-a", 1), "%d", "4", 1))
	b := writeScenario(t, strings.Replace(strings.Replace(yaml, "%s", "side-b", 1), "%d", "8", 1))
	cio, out, stderr := testIO(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runs := t.TempDir()
	res, err := Interleave(ctx, Config{Scenario: a, RunsDir: runs}, Config{Scenario: b, RunsDir: runs}, 2, cio.io)
	if err != nil {
		t.Fatalf("interleave: %v\nstderr:\n%s", err, stderr.String())
	}
	want := []string{
		filepath.Join(res.Dir, "A", "trial-1"), filepath.Join(res.Dir, "B", "trial-1"),
		filepath.Join(res.Dir, "A", "trial-2"), filepath.Join(res.Dir, "B", "trial-2"),
	}
	if !slices.Equal(res.Order, want) {
		t.Fatalf("order %v, want %v", res.Order, want)
	}
	var prevEnd time.Time
	for i, dir := range want {
		meta, err := rundir.ReadMeta(dir)
		if err != nil {
			t.Fatal(err)
		}
		if wantName := []string{"side-a", "side-b"}[i%2]; meta.Scenario != wantName {
			t.Errorf("%s ran %q, want %q", dir, meta.Scenario, wantName)
		}
		if meta.Ended.IsZero() || !meta.StartedAt.After(prevEnd) {
			t.Errorf("%s started at %v, ended at %v: not after the trial before it ended (%v)", dir, meta.StartedAt, meta.Ended, prevEnd)
		}
		prevEnd = meta.Ended
	}
	for _, side := range []string{"A", "B"} {
		got, err := rundir.Trials(filepath.Join(res.Dir, side))
		if err != nil {
			t.Fatal(err)
		}
		if w := []string{filepath.Join(res.Dir, side, "trial-1"), filepath.Join(res.Dir, side, "trial-2")}; !slices.Equal(got, w) {
			t.Errorf("%s/trials.json lists %v, want %v", side, got, w)
		}
	}
	for _, w := range []string{"interleaved A1 B1 A2 B2", "A: trial 2 of 2 (trial-2)", "B: trial 1 of 2 (trial-1)", "A spread over 2 trials", "B spread over 2 trials"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
}

// TestInterleaveRefusesGates: a pair is compared, not gated; the refusal
// comes before anything runs or is written.
func TestInterleaveRefusesGates(t *testing.T) {
	t.Parallel()
	sc := writeScenario(t, "name: r\nengine: {kind: sim}\nworkload: {concurrency: 1, requests: 1}\n")
	runs := t.TempDir()
	for _, b := range []Config{
		{Scenario: sc, RunsDir: runs, Thresholds: []string{"client.ttft.p99 < 1s"}},
		{Scenario: sc, RunsDir: runs, Shard: "0/2"},
		{Scenario: filepath.Join(runs, "missing.yaml"), RunsDir: runs},
	} {
		_, err := Interleave(context.Background(), Config{Scenario: sc, RunsDir: runs}, b, 2, IO{})
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("Interleave with B %+v = %v, want a *ConfigError", b, err)
		}
	}
	if entries, _ := os.ReadDir(runs); len(entries) != 0 {
		t.Errorf("a refused pair left %d entries in the runs directory", len(entries))
	}
}
