package report

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// dcgmGPU is one GPU's values in a test exposition; a negative value is
// left out of it.
type dcgmGPU struct {
	energyMJ, powerW, util, smClock, fbUsed, fbFree, reasons float64
}

// dcgmRow is a scrape of an exposition written as dcgm-exporter writes it,
// read through the DCGM dialect: what gpu.jsonl holds.
func dcgmRow(t testing.TB, target string, at time.Duration, gpus ...dcgmGPU) scrape.Row {
	t.Helper()
	var b strings.Builder
	series := []struct {
		name, typ string
		val       func(g dcgmGPU) float64
	}{
		{scrape.DCGMEnergy, "counter", func(g dcgmGPU) float64 { return g.energyMJ }},
		{scrape.DCGMPower, "gauge", func(g dcgmGPU) float64 { return g.powerW }},
		{scrape.DCGMGPUUtil, "gauge", func(g dcgmGPU) float64 { return g.util }},
		{scrape.DCGMSMClock, "gauge", func(g dcgmGPU) float64 { return g.smClock }},
		{scrape.DCGMFBUsed, "gauge", func(g dcgmGPU) float64 { return g.fbUsed }},
		{scrape.DCGMFBFree, "gauge", func(g dcgmGPU) float64 { return g.fbFree }},
		{scrape.DCGMClockEvents, "gauge", func(g dcgmGPU) float64 { return g.reasons }},
	}
	for _, s := range series {
		fmt.Fprintf(&b, "# HELP %s x\n# TYPE %s %s\n", s.name, s.name, s.typ)
		for i, g := range gpus {
			if v := s.val(g); v >= 0 {
				fmt.Fprintf(&b, "%s{gpu=\"%d\",UUID=\"GPU-%d\",modelName=\"NVIDIA H200\",Hostname=\"node-1\"} %g\n", s.name, i, i, v)
			}
		}
	}
	fams, err := scrape.Parse([]byte(b.String()), "text/plain; version=0.0.4")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := scrape.TelemetryDialect(scrape.DCGM)
	snap := d.Map(fams)
	return scrape.Row{Target: target, At: at, Duration: time.Millisecond, OK: true, Snapshot: &snap}
}

// TestGPUDevices: each GPU's figures from its own values: its energy from
// its counter (a restart counted from zero), power mean and peak, memory at
// its most used, the SM clock's mean and floor, and the share of samples a
// slowdown held, with the reasons by NVML's names.
func TestGPUDevices(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	const tg = "http://gpu:9400/metrics"
	chain := []scrape.Row{
		dcgmRow(t, tg, 0, dcgmGPU{1000, 100, 0, 345, 1024, 3072, 1}, dcgmGPU{5000, 200, 50, 1980, 2048, 2048, -1}),
		dcgmRow(t, tg, 100*ms, dcgmGPU{3000, 300, 100, 1755, 2048, 2048, 0x4}, dcgmGPU{6000, 400, 100, 1980, 2048, 2048, -1}),
		dcgmRow(t, tg, 200*ms, dcgmGPU{500, 200, 50, 1980, 1536, 2560, 0x4 | 0x40}, dcgmGPU{9000, 300, 90, 1980, 1024, 3072, -1}),
	}
	chain[2].Snapshot.GPUs = chain[2].Snapshot.GPUs[:1] // GPU 1 missed a sample: it has two
	failed := scrape.Row{Target: tg, At: 150 * ms, Error: "timeout"}
	devs := gpuDevices([][]scrape.Row{{chain[0], failed, chain[1], chain[2]}})
	if len(devs) != 2 {
		t.Fatalf("%d devices: %+v", len(devs), devs)
	}
	f := func(v float64) *float64 { return &v }
	want := []GPUDevice{
		{Target: tg, GPU: "0", UUID: "GPU-0", Model: "NVIDIA H200", Host: "node-1", Samples: 3,
			EnergyJ: f(2 + 0.5), PowerMeanW: f(200), PowerMaxW: f(300), Utilization: f(0.5),
			MemoryUsedMaxBytes: f(2048 << 20), MemoryTotalBytes: f(4096 << 20), SMClockMeanMHz: f((345 + 1755 + 1980) / 3.0), SMClockMinMHz: f(345),
			ClockEvents: []string{"gpu_idle", "sw_power_cap", "hw_thermal_slowdown"}, ThrottledShare: f(2.0 / 3)},
		{Target: tg, GPU: "1", UUID: "GPU-1", Model: "NVIDIA H200", Host: "node-1", Samples: 2,
			EnergyJ: f(1), PowerMeanW: f(300), PowerMaxW: f(400), Utilization: f(0.75),
			MemoryUsedMaxBytes: f(2048 << 20), MemoryTotalBytes: f(4096 << 20), SMClockMeanMHz: f(1980), SMClockMinMHz: f(1980)},
	}
	if diff := cmp.Diff(want, devs, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })); diff != "" {
		t.Errorf("devices (-want +got):\n%s", diff)
	}
}

// Each GPU's energy follows the phase's own rule (scrape.CounterIncrease):
// rows in the order they read their values, not the order they began (a
// boundary scrape in flight beside a periodic one), and a small step back
// counted as nothing, not as a reset that adds the counter's whole value
// (81.7 MJ for a phase of 563 J, seen under -race beside two CPU hogs).
func TestGPUDevicesReadOrder(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	const tg = "http://gpu:9400/metrics"
	at := func(start, took time.Duration, mJ float64) scrape.Row {
		r := dcgmRow(t, tg, start, dcgmGPU{mJ, 100, 50, 1980, 1024, 3072, 1})
		r.Duration = took
		return r
	}
	for _, tt := range []struct {
		name  string
		chain []scrape.Row
		want  float64
	}{
		{"a slow scrape began first and read last", []scrape.Row{at(0, ms, 81_700_000), at(50*ms, 300*ms, 81_700_300), at(100*ms, ms, 81_700_100), at(300*ms, ms, 81_700_400)}, 0.4},
		{"a cached value a moment old", []scrape.Row{at(0, ms, 81_700_000), at(100*ms, ms, 81_700_300), at(200*ms, ms, 81_700_200), at(300*ms, ms, 81_700_600)}, 0.6},
		{"a driver reload counts from zero", []scrape.Row{at(0, ms, 81_700_000), at(100*ms, ms, 81_700_300), at(200*ms, ms, 250)}, 0.3 + 0.25},
	} {
		devs := gpuDevices([][]scrape.Row{tt.chain})
		if len(devs) != 1 || devs[0].EnergyJ == nil || math.Abs(*devs[0].EnergyJ-tt.want) > 1e-9 {
			var got any = devs
			if len(devs) == 1 && devs[0].EnergyJ != nil {
				got = *devs[0].EnergyJ
			}
			t.Errorf("%s: energy %v J, want %v", tt.name, got, tt.want)
		}
	}
}

// gpuSweepRun is a two-point sweep whose GPUs an exporter reported: each
// phase's boundary scrapes and one scrape between them.
func gpuSweepRun(t testing.TB) (rundir.RunMeta, []client.Record, []scrape.Row) {
	ms := time.Millisecond
	const tg = "http://gpu:9400/metrics"
	meta := rundir.RunMeta{ID: "gpu-run", Scenario: "gpu", Seed: 1, StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Engine: rundir.EngineMeta{Kind: "sim", Dialect: "vllm", BaseURL: "http://e/v1"}}
	var recs []client.Record
	var gpuRows []scrape.Row
	energy := [2]float64{5e9, 7e9}
	for p, users := range []float64{1, 4} {
		start := time.Duration(100+1000*p) * ms
		name := fmt.Sprintf("concurrency-%g", users)
		for i := range 6 {
			sent := start + time.Duration(50*i)*ms
			r := client.Record{ID: fmt.Sprintf("gpu-%d-%d", p, i), Index: 6*p + i, Phase: name, Sent: sent, Wrote: sent + ms,
				FirstToken: sent + time.Duration(20+10*p+i)*ms, End: sent + 120*ms, PromptTokens: 32, OutputTokens: 10,
				TokenSource: client.TokensFromUsage, Status: 200, TargetPromptTokens: 32, MaxTokens: 10}
			for k := range 10 {
				r.Chunks = append(r.Chunks, client.Chunk{At: r.FirstToken + time.Duration(8*k)*ms, Tokens: 1})
			}
			recs = append(recs, r)
		}
		var rows []scrape.Row
		for k, at := range []time.Duration{start - 10*ms, start + 200*ms, start + 410*ms} {
			reasons := 1.0
			if k > 0 {
				reasons = 0
			}
			if p == 1 && k == 1 {
				reasons = 0x4
			}
			energy[0] += 60e3 * (1 + float64(p))
			energy[1] += 40e3 * (1 + float64(p))
			rows = append(rows, dcgmRow(t, tg, at,
				dcgmGPU{energy[0], 150 * (1 + float64(p)), 40 * (1 + float64(p)), 1980 - 200*float64(p*k), 70000, 11559, reasons},
				dcgmGPU{energy[1], 100 * (1 + float64(p)), 30 * (1 + float64(p)), 1980, 69000, 12559, 0}))
		}
		gpuRows = append(gpuRows, rows...)
		meta.Phases = append(meta.Phases, rundir.PhaseMeta{Name: name, Measured: true, Start: start, End: start + 400*ms,
			Load: users, LoadUnit: "users", GPUBefore: rows[:1], GPUAfter: rows[2:]})
	}
	return meta, recs, gpuRows
}

// TestGPURenderersGolden: a sweep with GPU telemetry shows, in the text
// summary and report.md, each point's utilisation and energy per token
// beside its load, the run's energy per token and per request, and each
// GPU on its own row; summary.json carries the same figures.
func TestGPURenderersGolden(t *testing.T) {
	meta, recs, gpuRows := gpuSweepRun(t)
	s := Compute(meta, recs, nil, nil, 0)
	AddGPUAndCache(&s, meta, gpuRows, recs)
	if s.GPU == nil || len(s.GPU.Devices) != 2 || s.Sweep == nil || s.Sweep.Points[1].EnergyPerOutputTokenJ == nil {
		t.Fatalf("GPU %+v, sweep %+v", s.GPU, s.Sweep)
	}
	// Truth: each phase's energy is its counters' increase over its two
	// windows (GPU 0: 2×60 J then 2×120 J; GPU 1: 2×40 J then 2×80 J),
	// over its 60 output tokens.
	for i, want := range []float64{200, 400} {
		if g := s.Phases[i].GPU; math.Abs(g.EnergyJ-want) > 1e-6 || math.Abs(*g.EnergyPerOutputTokenJ-want/60) > 1e-9 ||
			math.Abs(*s.Sweep.Points[i].EnergyPerOutputTokenJ-want/60) > 1e-9 {
			t.Errorf("phase %d: %+v, want %g J", i, g, want)
		}
	}
	if d := s.GPU.Devices[0]; *d.EnergyJ != 360 || *d.ThrottledShare != 1.0/6 || !cmp.Equal(d.ClockEvents, []string{"gpu_idle", "sw_power_cap"}) {
		t.Errorf("GPU 0 over the run: %+v", d)
	}
	for _, tc := range []struct {
		name   string
		render Renderer
		want   []string
	}{
		{"gpu.golden.md", RenderMarkdown, []string{"| GPU util | energy/token |", "### GPU and prefix cache", "| node-1:0 | NVIDIA H200 |"}},
		{"gpu.golden.txt", RenderText, []string{"GPU util", "energy/token", "per GPU, measured phases:", "17 % (sw_power_cap)"}},
	} {
		var buf bytes.Buffer
		if err := tc.render(&buf, s); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("%s lacks %q:\n%s", tc.name, w, buf.String())
			}
		}
		golden(t, tc.name, buf.Bytes())
	}
}
