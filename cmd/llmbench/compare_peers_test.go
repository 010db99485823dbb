package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report/comparison"
	"github.com/llmbench-org/llmbench/report/peers"
	"github.com/llmbench-org/llmbench/report/peers/peerstest"
)

// TestComparePeerVLLMSameTimings is issue 22's acceptance: a run against
// the built-in engine with speculative decoding (chunks of 4 tokens), and
// a vLLM --save-detailed result made from that run's own timings by vLLM's
// arithmetic (peerstest.VLLMResult). compare shows the definitional
// difference — vLLM's ITL is per chunk, about 4 times llmbench's per-token
// ITL; its clock starts at the hand-over — and a measurement difference
// of zero but for rounding (the file keeps seconds as floats).
func TestComparePeerVLLMSameTimings(t *testing.T) {
	t.Parallel()
	runs := t.TempDir()
	path := writeScenario(t, "name: peer\nengine: {kind: sim, preset: tiny, sim: {spec_tokens: 3, spec_accept_rate: 1}}\nworkload: {concurrency: 4, requests: 24, prompt_tokens: 16, output_tokens: 13, ignore_eos: true}\n")
	cio, _, stderr := testIO(nil)
	if code := execute(context.Background(), cio, []string{"run", "--view", "plain", "--output-dir", runs, path}); code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, stderr.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "*-peer"))
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	recs, err := peers.RunRecords(dirs[0])
	if err != nil || len(recs) != 24 {
		t.Fatalf("records: %d, %v", len(recs), err)
	}
	files := t.TempDir()
	detailed, summary := filepath.Join(files, "vllm-detailed.json"), filepath.Join(files, "vllm.json")
	for p, d := range map[string]bool{detailed: true, summary: false} {
		if err := os.WriteFile(p, peerstest.VLLMResult(recs, 1, d), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	cio, stdout, stderr := testIO(nil)
	if code := execute(context.Background(), cio, []string{"compare", "--format", "json", dirs[0], detailed, summary}); code != exitOK {
		t.Fatalf("compare: exit %d\n%s", code, stderr.String())
	}
	var rep peers.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil || len(rep.Explanations) != 2 {
		t.Fatalf("compare --format json: %v\n%s", err, stdout.String())
	}
	ex := rep.Explanations[0]
	if ex.Result.Tool != peers.VLLM || ex.Result.Completed != 24 {
		t.Fatalf("result %+v", ex.Result)
	}
	for _, l := range ex.Lines {
		if l.Total == nil || l.Measurement == nil || l.Definitional == nil {
			t.Fatalf("%s %s: not split: %+v", l.Metric, l.Stat, l)
		}
		// The file's times are float seconds: a few ns of rounding per sum.
		if math.Abs(*l.Measurement) > 1e-6 {
			t.Errorf("%s %s: measurement %g s from the run's own timings, want ~0", l.Metric, l.Stat, *l.Measurement)
		}
		if d := *l.Total - *l.Definitional - *l.Measurement; math.Abs(d) > 1e-12 {
			t.Errorf("%s %s: parts do not add up to the total (off by %g)", l.Metric, l.Stat, d)
		}
		if l.Metric == "itl" && l.Stat == "mean" {
			// 13 tokens in chunks of 1, 4, 4, 4: vLLM's gaps are per chunk,
			// llmbench's per token, a quarter of them.
			var metric float64
			for _, p := range l.Parts {
				if p.Name == peers.PartMetric {
					metric = p.Seconds
				}
			}
			if ratio := *l.Tool / *l.Run; ratio < 3.9 || ratio > 4.1 {
				t.Errorf("ITL mean: vLLM %g s, llmbench %g s: ratio %g, want 4 (chunks of 4 tokens)", *l.Tool, *l.Run, ratio)
			}
			if math.Abs(metric-(*l.Tool-*l.Run)) > 1e-6 {
				t.Errorf("ITL mean: the metric's definition explains %g s of %g s", metric, *l.Tool-*l.Run)
			}
		}
	}
	// The file was made from the run's requests: the same load.
	if ex.Load == nil || !ex.Load.Same || ex.ToolLoad == nil || ex.ToolLoad.Requests != 24 {
		t.Errorf("load: %+v (tool's %+v), want the same as the run's", ex.Load, ex.ToolLoad)
	}
	if plain := rep.Explanations[1]; plain.Lines[0].Total == nil || plain.Lines[0].Parts != nil || len(plain.Notes) == 0 {
		t.Errorf("without --save-detailed: want the total alone and a note, got %+v", plain.Lines[0])
	}

	// A result alone: its figures, and under llmbench's definitions.
	cio, stdout, stderr = testIO(nil)
	if code := execute(context.Background(), cio, []string{"compare", detailed}); code != exitOK || !strings.Contains(stdout.String(), "vllm under llmbench's definitions") {
		t.Errorf("compare (a result alone): exit %d\n%s%s", code, stdout.String(), stderr.String())
	}

	cio, stdout, stderr = testIO(nil)
	code := execute(context.Background(), cio, []string{"compare", dirs[0], detailed})
	if code != exitOK || !strings.Contains(stdout.String(), "what the metric is") {
		t.Errorf("compare (text): exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}

// TestCompareSentLoad: two runs of one scenario sent the same load, by the
// same plan (equal plan hashes); a run at another rate did not.
func TestCompareSentLoad(t *testing.T) {
	t.Parallel()
	runs := t.TempDir()
	var dirs []string
	for i, rate := range []string{"40", "40", "80"} {
		name := "load" + string(rune('a'+i))
		path := writeScenario(t, "name: "+name+"\nseed: 3\nengine: {kind: sim, preset: tiny}\nworkload: {rate: "+rate+", requests: 30, prompt_tokens: 16, output_tokens: 4}\n")
		cio, _, stderr := testIO(nil)
		if code := execute(context.Background(), cio, []string{"run", "--view", "plain", "--output-dir", runs, path}); code != exitOK {
			t.Fatalf("run: exit %d\n%s", code, stderr.String())
		}
		m, _ := filepath.Glob(filepath.Join(runs, "*-"+name))
		if len(m) != 1 {
			t.Fatalf("run directories %v", m)
		}
		dirs = append(dirs, m[0])
	}
	cio, stdout, stderr := testIO(nil)
	if code := execute(context.Background(), cio, []string{"compare", "--format", "json", dirs[0], dirs[1], dirs[2]}); code != exitOK {
		t.Fatalf("compare: exit %d\n%s", code, stderr.String())
	}
	var c comparison.Comparison
	if err := json.Unmarshal([]byte(stdout.String()), &c); err != nil || len(c.Comparisons) != 2 {
		t.Fatalf("compare: %v\n%s", err, stdout.String())
	}
	// The plan is the seed's: equal hashes whatever the machine did. Whether
	// the sends followed it is the machine's: a run whose arrivals went out
	// late (two cores shared by other tests) did not send the same load,
	// and says so; the verdict is checked only when both kept time.
	if l := c.Comparisons[0].Load; l == nil || !l.Identical {
		t.Errorf("one scenario twice: %+v, want the same plan", l)
	} else if late := lateArrivals(t, dirs[0]) + lateArrivals(t, dirs[1]); late == 0 && !l.Same {
		t.Errorf("one scenario twice, no arrival late: %+v, want the same load", l)
	} else if late > 0 {
		t.Logf("%d arrivals late: the verdict (%s) is the machine's", late, l.Says())
	}
	if l := c.Comparisons[1].Load; l == nil || l.Same || l.Identical || !strings.Contains(strings.Join(l.Differs, ";"), "planned gaps between sends mean") {
		t.Errorf("40 vs 80 requests/s: %+v, want a different load in its planned gaps", l)
	}
}

func lateArrivals(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Health struct {
			Late int `json:"late_arrivals"`
		} `json:"health"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s.Health.Late
}
