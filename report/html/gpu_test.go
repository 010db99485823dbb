package html

import (
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/scrape"
)

// TestGPUSection: a run with GPU telemetry draws each GPU's power and
// utilisation over the run clock among the load charts, one line per GPU;
// its sweep table gives each point's GPU utilisation and energy per token
// as summary.json has them; the GPU section lists each GPU and phase. A run
// without GPU telemetry shows none of it.
func TestGPUSection(t *testing.T) {
	t.Parallel()
	in := goldenRun.input()
	s := in.Summary
	if s.GPU == nil || len(s.GPU.Devices) != 2 || s.Sweep == nil {
		t.Fatalf("GPU %+v", s.GPU)
	}
	p := build(in)
	ids := map[string]*chart{}
	for _, c := range p.Timeline {
		ids[c.ID] = c
	}
	for _, id := range []string{"gpu-power", "gpu-util"} {
		c := ids[id]
		if c == nil || c.Empty != "" || len(c.Legend) != 2 || c.Legend[0].Label != "gpu-node-1:0" || c.Legend[1].Label != "gpu-node-1:1" {
			t.Errorf("chart %s: %+v", id, c)
		}
	}
	if p.Sweep == nil || !p.Sweep.GPU || len(p.Sweep.Rows) != len(s.Sweep.Points) {
		t.Fatalf("sweep %+v", p.Sweep)
	}
	for i, pt := range s.Sweep.Points {
		row := p.Sweep.Rows[i]
		if row.GPUUtil != pct(*pt.GPUUtilization) || row.EnergyPerToken != report.Joules(*pt.EnergyPerOutputTokenJ) || row.GPUUtil == "—" {
			t.Errorf("point %s: %q %q, summary %v %v", pt.Phase, row.GPUUtil, row.EnergyPerToken, *pt.GPUUtilization, *pt.EnergyPerOutputTokenJ)
		}
	}
	if p.GPU == nil || p.GPU.Devices == nil || len(p.GPU.Devices.Rows) != 2 || len(p.GPU.Phases.Rows) != 4 {
		t.Fatalf("GPU section %+v", p.GPU)
	}
	doc := renderString(t, in)
	for _, want := range []string{`<section id="gpu">`, `id="gpu-power"`, `id="gpu-util"`, "energy per output token", "49 % (sw_power_cap)", `<th class="num">energy/token</th>`} {
		if !strings.Contains(doc, want) {
			t.Errorf("the page lacks %q", want)
		}
	}

	plain := synth{seed: 7, rateScale: 0.5, stretch: 1, chunks: 4}.input()
	doc = renderString(t, plain)
	for _, absent := range []string{`<section id="gpu">`, `id="gpu-power"`, "energy/token"} {
		if strings.Contains(doc, absent) {
			t.Errorf("a run without GPU telemetry shows %q", absent)
		}
	}
}

// TestGPUSeries: one series per GPU of each target, named by host and
// index, the target's too when there are several; failed scrapes and GPUs
// without the metric are skipped.
func TestGPUSeries(t *testing.T) {
	t.Parallel()
	row := func(target string, at float64, vals ...float64) scrape.Row {
		snap := &scrape.Snapshot{}
		for i, v := range vals {
			r := scrape.GPUReading{GPU: string(rune('0' + i)), Host: "h", Values: map[string]float64{}}
			if v >= 0 {
				r.Values[scrape.DCGMPower] = v
			}
			snap.GPUs = append(snap.GPUs, r)
		}
		return scrape.Row{Target: target, At: sec(at), OK: true, Snapshot: snap}
	}
	rows := []scrape.Row{row("http://a/m", 1, 100, 200), {Target: "http://a/m", At: sec(1.5), Error: "down"}, row("http://a/m", 2, 150, -1)}
	got := gpuSeries(rows, scrape.DCGMPower, 1)
	if len(got) != 2 || got[0].name != "h:0" || len(got[0].pts) != 2 || got[0].pts[1] != (xy{2, 150}) || len(got[1].pts) != 1 {
		t.Errorf("one target: %+v", got)
	}
	got = gpuSeries(append(rows, row("http://b/m", 1, 50)), scrape.DCGMPower, 1)
	if len(got) != 3 || got[2].name != "http://b/m h:0" {
		t.Errorf("two targets: %+v", got)
	}
}
