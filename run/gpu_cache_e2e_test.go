package run

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/internal/testkit"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// runAndSummarize runs a scenario file against the built-in engine and
// returns its run directory and summary.
func runAndSummarize(t *testing.T, path string) (string, report.Summary, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cio, stdout, stderr := testIO(nil)
	dir, err := runScenario(ctx, runOpts{scenario: path, runsDir: t.TempDir(), output: "plain", every: time.Minute}, cio)
	if err != nil && !strings.Contains(err.Error(), "gates") {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var s report.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return dir, s, stdout.String()
}

// TestGPUEnergyAgainstTruth: a run that scrapes the built-in engine's
// emulated DCGM exporter reports each phase's energy, and its energy per
// output token, within 1 % of the power model's truth (or what the boundary
// reads' own durations leave open, when a busy host made that wider): idle power over the
// window between the phase's boundary scrapes, plus the preset's joules for
// every prompt token the engine computed (its cache hits left out) and every
// token it generated (the engine's truth.jsonl).
func TestGPUEnergyAgainstTruth(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, `
name: gpu-truth
seed: 4
engine: {kind: sim, preset: tiny, dialect: vllm}
workload:
  sweep: {concurrencies: [1, 6]}
  requests: 30
  prompt_tokens: {dist: uniform, min: 40, max: 200}
  output_tokens: {dist: uniform, min: 8, max: 48}
scrape: {interval: 200ms, gpu: {}}
`)
	dir, s, stdout := runAndSummarize(t, path)
	p, err := sim.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	meta, err := rundir.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	phaseOf := map[string]string{}
	outputs := map[string]int{}
	for _, r := range readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile)) {
		phaseOf[r.ID] = r.Phase
		if r.OK() {
			outputs[r.Phase] += r.OutputTokens
		}
	}
	tokenJ := map[string]float64{}
	for _, tr := range readJSONL[sim.RequestTruth](t, filepath.Join(dir, rundir.TruthFile)) {
		if tr.Preemptions > 0 {
			t.Fatalf("request %s was preempted: its recomputed prefill is not in this truth", tr.ID)
		}
		tokenJ[phaseOf[tr.ID]] += p.PassJoules(tr.PromptTokens-tr.CachedTokens, tr.GeneratedTokens)
	}
	checked := 0
	for _, ph := range meta.Phases {
		if !ph.Measured {
			continue
		}
		var got *report.GPUResult
		for _, pr := range s.Phases {
			if pr.Name == ph.Name {
				got = pr.GPU
			}
		}
		if got == nil || len(ph.GPUBefore) != 1 || len(ph.GPUAfter) != 1 {
			t.Fatalf("phase %s: GPU %+v, boundary rows %d/%d", ph.Name, got, len(ph.GPUBefore), len(ph.GPUAfter))
		}
		b, a := ph.GPUBefore[0], ph.GPUAfter[0]
		window := (a.At + a.Duration/2) - (b.At + b.Duration/2)
		idle := p.GPUIdleWatts * float64(p.GPUCount())
		want := idle*window.Seconds() + tokenJ[ph.Name]
		// 1 %, or what the boundary reads' own durations leave open
		// (where in its fetch each read was taken) when the machine made
		// that wider: under -race beside two CPU hogs a DCGM fetch took
		// 118 ms, ±6 % of a short window's energy (scrape's
		// TestBuiltInDCGMExporter, .ci/busy-test run 11).
		bound := max(0.01, (idle*(a.Duration+b.Duration).Seconds()+0.004)/want)
		if got.Method != scrape.EnergyFromCounter || math.Abs(got.EnergyJ-want) > bound*want {
			t.Errorf("phase %s: energy %.3f J by %q, truth %.3f J ±%.2f %% (window %v, tokens %.3f J)", ph.Name, got.EnergyJ, got.Method, want, 100*bound, window, tokenJ[ph.Name])
		}
		wantPerToken := want / float64(outputs[ph.Name])
		if got.EnergyPerOutputTokenJ == nil || math.Abs(*got.EnergyPerOutputTokenJ-wantPerToken) > bound*wantPerToken {
			t.Errorf("phase %s: energy per output token %v, truth %.4f J", ph.Name, got.EnergyPerOutputTokenJ, wantPerToken)
		}
		if got.Utilization == nil || *got.Utilization <= 0 || got.GPUs != 1 {
			t.Errorf("phase %s: utilisation %v, GPUs %d", ph.Name, got.Utilization, got.GPUs)
		}
		// The one GPU on its own: its own counter gives the phase's energy
		// (whole mJ), the preset's memory is held, its SM clock moves
		// between idle's and busy's, and idle is a clock event, never a
		// slowdown.
		if len(got.Devices) != 1 {
			t.Fatalf("phase %s: devices %+v", ph.Name, got.Devices)
		}
		d := got.Devices[0]
		usedMiB := math.Round(float64(p.GPUMemoryMiB) * p.GPUMemoryUsedShare)
		if d.EnergyJ == nil || math.Abs(*d.EnergyJ-got.EnergyJ) > 1e-6 || d.Model == "" || d.UUID == "" ||
			d.MemoryUsedMaxBytes == nil || *d.MemoryUsedMaxBytes != usedMiB*(1<<20) || *d.MemoryTotalBytes != float64(p.GPUMemoryMiB)*(1<<20) ||
			d.SMClockMinMHz == nil || *d.SMClockMinMHz < 345 || *d.SMClockMeanMHz > 1980 || d.ThrottledShare == nil || *d.ThrottledShare != 0 {
			t.Errorf("phase %s: device %+v (energy %v, memory %v of %v, clock %v..%v, throttled %v)", ph.Name, d, deref(d.EnergyJ),
				deref(d.MemoryUsedMaxBytes), deref(d.MemoryTotalBytes), deref(d.SMClockMinMHz), deref(d.SMClockMeanMHz), deref(d.ThrottledShare))
		}
		t.Logf("phase %s: %.3f J (truth %.3f), %.4f J/token (truth %.4f)", ph.Name, got.EnergyJ, want, *got.EnergyPerOutputTokenJ, wantPerToken)
		checked++
	}
	if checked != 2 || s.GPU == nil || s.Sweep == nil || s.Sweep.Points[1].EnergyPerOutputTokenJ == nil || s.Sweep.Points[1].GPUUtilization == nil {
		t.Fatalf("checked %d phases; run GPU %+v; sweep %+v", checked, s.GPU, s.Sweep)
	}
	if !strings.Contains(stdout, "per output token") || !strings.Contains(stdout, "per phase, GPU and prefix cache:") || !strings.Contains(stdout, "per GPU, measured phases:") {
		t.Errorf("the text summary lacks the GPU lines:\n%s", stdout)
	}
	// report.md and report.html carry them too.
	md, _ := os.ReadFile(filepath.Join(dir, rundir.MarkdownFile))
	page, _ := os.ReadFile(filepath.Join(dir, rundir.HTMLFile))
	for _, want := range []string{"### GPU and prefix cache", "| GPU util | energy/token |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, want := range []string{`<section id="gpu">`, `id="gpu-power"`, `id="gpu-util"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// The engine's rows stay the engine's: no GPU row among them.
	for _, r := range readJSONL[scrape.Row](t, filepath.Join(dir, rundir.ScrapesFile)) {
		if strings.Contains(r.Target, sim.DCGMPath) {
			t.Fatalf("a GPU scrape in scrapes.jsonl: %+v", r)
		}
	}
}

// TestCacheColdWarmSweep: a sweep whose points repeat the same prompts
// reports 0 cached tokens at every point when it runs cold (client usage,
// the engine's counter, and its truth alike), and cached tokens once the
// cache is warm; the report says which point was which.
func TestCacheColdWarmSweep(t *testing.T) {
	t.Parallel()
	const body = `
seed: 2
workload:
  sweep: {concurrencies: [1, 4, 8]}
  requests: 16
  dataset: {type: shared_prefix, groups: 16, prompts_per_group: 1, prefix_tokens: 96}
  prompt_tokens: 8
  output_tokens: 4
`
	for _, tt := range []struct {
		dialect, cache string
	}{{"vllm", "cold"}, {"sglang", "cold"}, {"llamacpp", "cold"}, {"vllm", "warm"}} {
		t.Run(tt.dialect+"-"+tt.cache, func(t *testing.T) {
			t.Parallel()
			path := writeScenario(t, "name: cache-"+tt.cache+"\nengine: {kind: sim, preset: tiny, dialect: "+tt.dialect+"}\n"+body+"  cache: "+tt.cache+"\n")
			dir, s, stdout := runAndSummarize(t, path)
			if s.Sweep == nil || len(s.Sweep.Points) != 3 {
				t.Fatalf("sweep %+v", s.Sweep)
			}
			phaseOf := map[string]string{}
			for _, r := range readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile)) {
				phaseOf[r.ID] = r.Phase
			}
			truthCached := map[string]int{}
			for _, tr := range readJSONL[sim.RequestTruth](t, filepath.Join(dir, rundir.TruthFile)) {
				truthCached[phaseOf[tr.ID]] += tr.CachedTokens
			}
			for i, pr := range s.Phases {
				c := pr.Cache
				if c == nil || c.Mode != tt.cache || s.Sweep.Points[i].Cache != tt.cache {
					t.Fatalf("phase %s: cache %+v, point %q", pr.Name, c, s.Sweep.Points[i].Cache)
				}
				if c.CachedTokens != truthCached[pr.Name] {
					t.Errorf("phase %s: %d cached tokens reported, the engine's truth %d", pr.Name, c.CachedTokens, truthCached[pr.Name])
				}
				server := -1.0
				if c.ServerCachedTokens != nil {
					server = *c.ServerCachedTokens
				}
				switch {
				case tt.cache == "cold" && (c.Reset != "ok" || c.CachedTokens != 0 || server > 0):
					t.Errorf("cold phase %s: reset %q, %d cached tokens, engine counter %v", pr.Name, c.Reset, c.CachedTokens, server)
				case tt.cache == "warm" && i > 0 && (c.CachedTokens == 0 || (tt.dialect == "vllm" && server <= 0)):
					t.Errorf("warm phase %s after the first: %d cached tokens, engine counter %v", pr.Name, c.CachedTokens, server)
				}
			}
			for _, f := range s.Findings {
				if f.ID == report.IDColdCacheHits || f.ID == report.IDCacheResetFailed {
					t.Errorf("finding %s: %s", f.ID, f.Verdict)
				}
			}
			if !strings.Contains(stdout, "concurrency-4  "+tt.cache) {
				t.Errorf("the text summary does not say the points were %s:\n%s", tt.cache, stdout)
			}
		})
	}
}

// TestCacheColdWithoutReset: an engine that offers no reset (FastDeploy)
// cannot start a phase cold: the phase says so and a finding warns; the
// shipped cold/warm example runs cold then warm.
func TestCacheColdWithoutReset(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, `
name: no-reset
engine: {kind: sim, preset: tiny, dialect: fastdeploy}
workload: {concurrency: 2, requests: 6, prompt_tokens: 32, output_tokens: 4, cache: cold}
`)
	_, s, _ := runAndSummarize(t, path)
	if c := s.Phases[0].Cache; c == nil || c.Mode != "cold" || !strings.Contains(c.Reset, "offers no prefix-cache reset") {
		t.Fatalf("cache %+v", s.Phases[0].Cache)
	}
	found := false
	for _, f := range s.Findings {
		found = found || f.ID == report.IDCacheResetFailed
	}
	if !found {
		t.Errorf("no %s finding among %+v", report.IDCacheResetFailed, s.Findings)
	}

	example := filepath.Join(testkit.ExampleFiles(t), "cache-cold-warm.yaml")
	_, s, stdout := runAndSummarize(t, example)
	byName := map[string]*report.CacheResult{}
	for _, ph := range s.Phases {
		byName[ph.Name] = ph.Cache
	}
	if c := byName["cold"]; c == nil || c.Mode != "cold" || c.Reset != "ok" || c.CachedTokens != 0 {
		t.Errorf("cold phase %+v", c)
	}
	if c := byName["warm"]; c == nil || c.Mode != "warm" || c.CachedTokens < 16*80 {
		t.Errorf("warm phase %+v: want at least 16 prompts × 80 cached tokens", c)
	}
	if !strings.Contains(stdout, "cold ") || !strings.Contains(stdout, "warm ") {
		t.Errorf("text:\n%s", stdout)
	}
}

// TestInspectDCGM: `llmbench inspect --dialect dcgm FILE` and detection
// both read an exposition as dcgm-exporter writes it.
func TestInspectDCGM(t *testing.T) {
	t.Parallel()
	file := filepath.Join("..", "scrape", "testdata", "dcgm-exporter.txt")
	for _, dialect := range []string{"", scrape.DCGM} {
		rep, err := Inspect(t.Context(), file, dialect, io.Discard)
		if err != nil || rep.Dialect != scrape.DCGM || rep.Snapshot.Gauges[scrape.GPUCount] != 2 || rep.Snapshot.Counters[scrape.GPUEnergy] <= 0 {
			t.Errorf("dialect %q: %v %+v", dialect, err, rep.Snapshot)
		}
	}
}

func deref(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}
