package html

import (
	"fmt"
	"math"
	"slices"

	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/scrape"
)

// gpuView is the GPU section: what the GPU telemetry says of the measured
// phases, each GPU on its own row, and each phase's energy and prefix
// cache, in the tables the text summary and report.md show
// (report.GPUDeviceRows, report.PhaseGPURows).
type gpuView struct {
	Facts   []fact
	Devices *rowsTable
	Phases  *rowsTable
}

// rowsTable is a table of preformatted cells under a header: its first
// column names the row, its Left first columns are words, the rest figures.
type rowsTable struct {
	Head []string
	Rows [][]string
	Left int
}

// Num reports whether column i holds figures (right-aligned).
func (t *rowsTable) Num(i int) bool { return i >= t.Left }

func rowsTableOf(rows [][]string, left int) *rowsTable {
	if len(rows) < 2 {
		return nil
	}
	return &rowsTable{Head: rows[0], Rows: rows[1:], Left: left}
}

func gpuOf(s report.Summary) *gpuView {
	phases := rowsTableOf(report.PhaseGPURows(s), 2)
	g := s.GPU
	if g == nil && phases == nil {
		return nil
	}
	v := &gpuView{Phases: phases}
	if g == nil {
		return v
	}
	gpus := fmt.Sprintf("%d", g.GPUs)
	v.Facts = []fact{
		{Label: "energy", Value: fmt.Sprintf("%s over %.1f s (%s)", report.Joules(g.EnergyJ), g.WindowS, g.Method)},
		{Label: "mean power", Value: fmt.Sprintf("%.0f W, %s GPUs together", g.MeanPowerW, gpus)},
	}
	if p := g.EnergyPerOutputTokenJ; p != nil {
		v.Facts = append(v.Facts, fact{Label: "energy per output token", Value: report.Joules(*p) + " (idle power included)"})
	}
	if p := g.EnergyPerRequestJ; p != nil {
		v.Facts = append(v.Facts, fact{Label: "energy per request", Value: report.Joules(*p)})
	}
	if u := g.Utilization; u != nil {
		v.Facts = append(v.Facts, fact{Label: "GPU utilisation", Value: pct(*u) + " (mean over the scrapes and GPUs)"})
	}
	if u := g.SMActive; u != nil {
		v.Facts = append(v.Facts, fact{Label: "SM activity", Value: pct(*u)})
	}
	for _, d := range g.Devices {
		if d.ThrottledShare != nil && *d.ThrottledShare > 0 {
			v.Facts = append(v.Facts, fact{Label: "throttled", Value: fmt.Sprintf("GPU %s slowed in %s of its scrapes", d.GPU, pct(*d.ThrottledShare)), Class: "warn"})
		}
	}
	v.Devices = rowsTableOf(report.GPUDeviceRows(g.Devices), 2)
	return v
}

// gpuSeries is one GPU's values of one exposed metric over the run clock,
// from the GPU telemetry's rows, one series per GPU of each target.
func gpuSeries(rows []scrape.Row, metric string, scale float64) []gaugeSeries {
	var out []gaugeSeries
	index := map[string]int{}
	targets := map[string]bool{}
	for _, row := range rows {
		targets[row.Target] = true
	}
	for _, row := range sortedRows(rows) {
		if !row.OK || row.Snapshot == nil {
			continue
		}
		for _, g := range row.Snapshot.GPUs {
			val, has := g.Values[metric]
			if !has {
				continue
			}
			key := row.Target + "\xff" + g.Host + "\xff" + g.UUID + "\xff" + g.GPU
			i, seen := index[key]
			if !seen {
				name := "GPU " + g.GPU
				if g.Host != "" {
					name = g.Host + ":" + g.GPU
				}
				if len(targets) > 1 {
					name = redact.URL(row.Target) + " " + name
				}
				i = len(out)
				index[key] = i
				out = append(out, gaugeSeries{name: name})
			}
			out[i].pts = append(out[i].pts, xy{X: row.At.Seconds(), Y: val * scale})
		}
	}
	return out
}

// gpuCharts draw each GPU's power and utilisation over the run clock, under
// the load charts and on their axis and phase bands: what the GPUs did at
// each load.
func gpuCharts(rows []scrape.Row, span float64, phases []phaseSpan) ([]*chart, []string) {
	if len(rows) == 0 {
		return nil, nil
	}
	var charts []*chart
	var notes []string
	for _, spec := range []struct {
		id, title, metric, unit string
		scale, full             float64
		caption                 string
	}{
		{"gpu-power", "GPU power", scrape.DCGMPower, "W", 1, 0,
			"Each GPU's board power draw (DCGM_FI_DEV_POWER_USAGE) at each scrape of the GPU telemetry."},
		{"gpu-util", "GPU utilisation", scrape.DCGMGPUUtil, "%", 1, 100,
			"Each GPU's utilisation (DCGM_FI_DEV_GPU_UTIL: the share of the sample period a kernel ran) at each scrape; a busy GPU can read 100 % with most SMs idle."},
	} {
		c := newChart(spec.id, spec.title)
		series := gpuSeries(rows, spec.metric, spec.scale)
		if len(series) == 0 {
			c.Empty = "The GPU telemetry does not export " + spec.metric + ", or no scrape of it succeeded."
			charts = append(charts, c)
			continue
		}
		peak := 0.0
		for i := range series {
			for _, p := range series[i].pts {
				peak = math.Max(peak, p.Y)
			}
			if idx := lttbIndices(series[i].pts, maxLinePoints); len(idx) < len(series[i].pts) {
				notes = append(notes, fmt.Sprintf("%s of %s: %s scrapes reduced to %s points (largest-triangle-three-buckets).",
					spec.title, series[i].name, count(len(series[i].pts)), count(len(idx))))
				series[i].pts = pick(series[i].pts, idx)
			}
		}
		top := gaugeTop(peak, math.Max(spec.full, peak))
		if spec.full == 0 {
			top = math.Max(peak*1.25, 1)
		}
		x, y := c.timeX(span), c.valueY(0, top, spec.title+" ("+spec.unit+")")
		c.phaseBands(x, phases)
		for i, s := range slices.All(series) {
			class := fmt.Sprintf("c%d", 1+i%8)
			c.Paths = append(c.Paths, path{Class: "line " + class, D: linePath(s.pts, x, y), Title: s.name})
			c.Legend = append(c.Legend, legend{Class: class, Kind: "line", Label: s.name})
		}
		c.Caption = spec.caption + bandsCaption
		charts = append(charts, c)
	}
	return charts, notes
}
