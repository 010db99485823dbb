package html

import (
	"fmt"
	"math"
	"slices"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
)

// lengthBins is how many bars a length histogram has at most: enough to
// show a shape, few enough that each bar is wider than a hair.
const lengthBins = 24

// lengthCharts are the histograms of the successful measured requests'
// prompt and output lengths in tokens, as the engine counted them
// (issue 25: AIPerf and GuideLLM show them).
func lengthCharts(s report.Summary, records []client.Record) []*chart {
	measured := measuredPhases(s)
	var prompt, output []float64
	for i := range records {
		r := &records[i]
		if !r.OK() || len(measured) > 0 && !measured[r.Phase] {
			continue
		}
		prompt = append(prompt, float64(r.PromptTokens))
		output = append(output, float64(r.OutputTokens))
	}
	return []*chart{
		lengthChart("lengths-prompt", "Prompt lengths", "prompt tokens", prompt),
		lengthChart("lengths-output", "Output lengths", "output tokens", output),
	}
}

func measuredPhases(s report.Summary) map[string]bool {
	measured := map[string]bool{}
	for _, ph := range s.Phases {
		if ph.Measured {
			measured[ph.Name] = true
		}
	}
	return measured
}

// lengthChart draws one histogram: bins of whole tokens between the
// smallest and the largest length, the y axis scaled to the tallest bar.
func lengthChart(id, title, unit string, xs []float64) *chart {
	c := newChartSized(id, title, smallW, smallH)
	if len(xs) == 0 {
		c.Empty = "No successful measured request to count."
		return c
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	width := math.Max(1, math.Ceil((hi-lo+1)/lengthBins))
	bins := make([]int, int((hi-lo)/width)+1)
	for _, v := range xs {
		bins[int((v-lo)/width)]++
	}
	x := valueAxis(lo, lo+width*float64(len(bins)), c.Plot.X, c.Plot.Right(), max(3, int(c.Plot.W/70)))
	c.XTicks, c.XTitle = x.tickMarks(), unit
	y := c.valueY(0, float64(slices.Max(bins))*1.1, "requests")
	for i, n := range bins {
		if n == 0 {
			continue
		}
		from := lo + width*float64(i)
		x0, x1, top := x.at(from), x.at(from+width), y.at(float64(n))
		label := fmt.Sprintf("%s–%s", num(from), num(from+width-1))
		if width == 1 {
			label = num(from)
		}
		c.Boxes = append(c.Boxes, box{X: x0, Y: top, W: math.Max(x1-x0-1, 1), H: y.at(0) - top, Class: "c7",
			Title: fmt.Sprintf("%s %s: %s requests", label, unit, count(n))})
	}
	m, sd := meanStd(xs)
	c.Caption = fmt.Sprintf("%s successful measured requests: min %s · mean %s · std %s · max %s %s.",
		count(len(xs)), num(lo), num(m), num(sd), num(hi), unit)
	return c
}

func meanStd(xs []float64) (mean, std float64) {
	for _, v := range xs {
		mean += v
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, v := range xs {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// spreadRow is one client latency's extremes and spread, in ms: the
// summary's mean, standard deviation and maximum, and the smallest sample
// (the summary keeps no minimum).
type spreadRow struct {
	Name, N, Min, Mean, Std, Max string
}

// spreadOf is the latency table's min/mean/std/max companion. The minimum
// is the records' (the ITL's from the digest's sketch, which keeps it
// exactly); the rest is the summary's, so the two tables agree.
func spreadOf(s report.Summary, records []client.Record, digest *chunkdigest.Digest) []spreadRow {
	measured := measuredPhases(s)
	mins := map[string]float64{"ttft": math.Inf(1), "tpot": math.Inf(1), "e2e": math.Inf(1), "itl": math.Inf(1)}
	for i := range records {
		r := &records[i]
		if !r.OK() || len(measured) > 0 && !measured[r.Phase] {
			continue
		}
		if d, ok := r.TTFT(); ok {
			mins["ttft"] = math.Min(mins["ttft"], d.Seconds())
		}
		if d, ok := r.TPOT(); ok {
			mins["tpot"] = math.Min(mins["tpot"], d.Seconds())
		}
		mins["e2e"] = math.Min(mins["e2e"], r.E2E().Seconds())
	}
	if itl := digest.Of(func(phase string) bool { return len(measured) == 0 || measured[phase] }).ITL; itl.N() > 0 {
		mins["itl"] = itl.Min().Seconds()
	}
	l := s.Client.Latency
	var out []spreadRow
	for _, d := range []struct {
		key  string
		dist report.Dist
	}{{"ttft", l.TTFT}, {"itl", l.ITL}, {"tpot", l.TPOT}, {"e2e", l.E2E}} {
		row := spreadRow{Name: displayName(d.key), N: count(d.dist.N), Min: "—", Mean: "—", Std: "—", Max: "—"}
		if d.dist.N > 0 {
			row.Mean, row.Std, row.Max = ms(d.dist.Mean), ms(d.dist.StdDev), ms(d.dist.Max)
			if m := mins[d.key]; !math.IsInf(m, 1) {
				row.Min = ms(m)
			}
		}
		out = append(out, row)
	}
	return out
}
