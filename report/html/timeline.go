package html

import (
	"fmt"
	"math"
	"slices"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/scrape"
)

// timeline is the charts over the run clock and what was done to the data
// to draw them.
type timeline struct {
	charts []*chart
	notes  []string
}

const bandsCaption = " Shaded: measured phases; hatched: phases not measured (warm-up)."

func timelineOf(s report.Summary, in Input, rows []scrape.Row) timeline {
	records := in.Records
	phases := phaseSpans(s.Phases)
	span := runSpan(phases, records, append(slices.Clip(rows), in.GPURows...))
	var tl timeline
	if span > longRunSeconds {
		tl.notes = append(tl.notes, fmt.Sprintf("The run clock reads m:ss: the run lasted %s.", clock(span)))
	}
	tp := throughputFrom(records, in.Chunks, &in.Digest.Of(nil).Arrivals, span)
	per := "each second"
	if tp.width > 1 {
		per = "each " + dur(tp.width)
		tl.notes = append(tl.notes, fmt.Sprintf("Rates are counted in %s buckets of the run clock, not per second: at one second the %s run would need more than %d.",
			dur(tp.width), clock(span), maxBuckets))
	}
	failed := failedScrapes(rows)

	tl.charts = append(tl.charts,
		requestsChart(tp, span, phases, per),
		tokensChart(tp, span, phases, per),
	)
	for _, lc := range []struct {
		id, name string
		samples  []latencySample
	}{
		{"ttft", "TTFT", ttftSamples(records)},
		{"e2e", "E2E", e2eSamples(records)},
	} {
		c, note := scatterChart(lc.id, lc.name, lc.samples, span, phases)
		tl.charts = append(tl.charts, c)
		if note != "" {
			tl.notes = append(tl.notes, note)
		}
	}
	c, notes := concurrencyChart(records, rows, span, phases, failed)
	tl.charts = append(tl.charts, c)
	tl.notes = append(tl.notes, notes...)
	c, notes = kvChart(rows, span, phases, failed)
	tl.charts = append(tl.charts, c)
	tl.notes = append(tl.notes, notes...)
	gpu, notes := gpuCharts(in.GPURows, span, phases) // gpu.go
	tl.charts = append(tl.charts, gpu...)
	tl.notes = append(tl.notes, notes...)
	if o := s.Outages; o != nil {
		for _, c := range tl.charts {
			c.outageBands(span, o)
		}
		tl.notes = append(tl.notes, fmt.Sprintf("Red bands: the outages, when the engine could not be reached (%d, %.2f s in all; summary.json's outages).",
			o.Count, o.Total))
	}
	return tl
}

// outageBands shades the outages on a run-clock chart, over its phases,
// each with its length and failed attempts as its title.
func (c *chart) outageBands(span float64, o *report.Outages) {
	if c.Empty != "" {
		return
	}
	x := timeAxis(span, c.Plot.X, c.Plot.Right(), int(c.Plot.W/80)) // as timeX laid it out
	for _, w := range o.Windows {
		x0, x1 := math.Max(x.at(w.Start), c.Plot.X), math.Min(x.at(w.Start+w.Length), c.Plot.Right())
		if x1 <= x0 {
			x1 = math.Min(x0+1, c.Plot.Right()) // a window too short to see still shows
		}
		if x1 <= x0 {
			continue
		}
		title := fmt.Sprintf("outage at %s for %s: %d failed attempts, %d requests affected", dur(w.Start), dur(w.Length), w.Attempts, w.Affected)
		if w.Open {
			title += " (still down when the run ended)"
		}
		c.Outages = append(c.Outages, band{X: x0, W: x1 - x0, Title: title})
	}
}

func requestsChart(tp throughput, span float64, phases []phaseSpan, per string) *chart {
	c := newChart("throughput-requests", "Completed requests per second")
	top := 0.0
	for _, pts := range [][]xy{tp.okPerS, tp.failed} {
		for _, p := range pts {
			top = math.Max(top, p.Y)
		}
	}
	x, y := c.timeX(span), c.valueY(0, top, "requests/s")
	c.phaseBands(x, phases)
	c.Paths = append(c.Paths, path{Class: "area c1", D: stepPath(tp.okPerS, span, x, y, true)})
	c.Legend = append(c.Legend, legend{Class: "c1", Kind: "area", Label: "successful"})
	if tp.anyFailed {
		c.Paths = append(c.Paths, path{Class: "line bad", D: stepPath(tp.failed, span, x, y, false)})
		c.Legend = append(c.Legend, legend{Class: "bad", Kind: "line", Label: "failed"})
	}
	c.Caption = "Requests that ended in " + per + " of the run clock, counted at their end; failed ones at the moment they failed." + bandsCaption
	return c
}

func tokensChart(tp throughput, span float64, phases []phaseSpan, per string) *chart {
	c := newChart("throughput-tokens", "Output tokens per second")
	top := 0.0
	for _, p := range tp.tokensPerS {
		top = math.Max(top, p.Y)
	}
	x, y := c.timeX(span), c.valueY(0, top, "tokens/s")
	c.phaseBands(x, phases)
	c.Paths = append(c.Paths, path{Class: "area c2", D: stepPath(tp.tokensPerS, span, x, y, true)})
	c.Legend = append(c.Legend, legend{Class: "c2", Kind: "area", Label: "output tokens"})
	how := "counted at the arrival of the streamed chunks that carried them (a chunk's own token count, else one)"
	if tp.tokensFrom == "usage" {
		how = "counted from the server's usage at the end of requests that streamed no chunks, at the chunks' arrival otherwise"
	}
	c.Caption = "Output tokens received in " + per + " of the run clock, " + how + "." + bandsCaption
	return c
}

// scatterChart draws one dot per request at its send time, with the p50 and
// p99 of the requests sent in each bucket.
func scatterChart(id, name string, samples []latencySample, span float64, phases []phaseSpan) (*chart, string) {
	c := newChart(id+"-scatter", name+" per request, by send time")
	if len(samples) == 0 {
		c.Empty = "No request has a " + name + " to show."
		return c, ""
	}
	// Milliseconds, or seconds once the slowest request takes ten.
	unit, unitName := 1000.0, "ms"
	vals := make([]float64, 0, len(samples))
	for _, s := range samples {
		vals = append(vals, s.v)
	}
	slices.Sort(vals)
	if vals[len(vals)-1] >= 10 {
		unit, unitName = 1, "s"
	}
	for i := range vals {
		vals[i] *= unit
	}
	lo, p90, top := vals[0], vals[int(0.9*float64(len(vals)-1))], vals[len(vals)-1]
	x := c.timeX(span)
	var y axis
	scale := "linear"
	if positive := firstPositive(vals); top > 10*p90 && p90 > 0 && positive > 0 {
		y, scale = c.logY(positive, top, name+" ("+unitName+", log scale)"), "logarithmic: the slowest requests are more than ten times the p90"
	} else {
		y = c.valueY(math.Min(0, lo), top, name+" ("+unitName+")")
	}
	c.phaseBands(x, phases)

	var ok, bad []xy
	for _, s := range samples {
		pt := xy{X: s.sent, Y: s.v * unit}
		if s.ok {
			ok = append(ok, pt)
		} else {
			bad = append(bad, pt)
		}
	}
	dOK, nOK := drawDots(ok, x, y, len(samples) > maxAllDots)
	dBad, nBad := drawDots(bad, x, y, len(samples) > maxAllDots)
	c.Paths = append(c.Paths, path{Class: "dots c1", D: dOK})
	c.Legend = append(c.Legend, legend{Class: "c1", Kind: "dots", Label: "request"})
	if len(bad) > 0 {
		c.Paths = append(c.Paths, path{Class: "dots bad", D: dBad})
		c.Legend = append(c.Legend, legend{Class: "bad", Kind: "dots", Label: "failed request"})
	}
	p50, p99, window := rollingQuantiles(samples)
	scaled := func(pts []xy) []xy {
		for i := range pts {
			pts[i].Y *= unit
		}
		return pts
	}
	c.Paths = append(c.Paths,
		path{Class: "line c4", D: linePath(scaled(p50), x, y)},
		path{Class: "line c5", D: linePath(scaled(p99), x, y)})
	c.Legend = append(c.Legend, legend{Class: "c4", Kind: "line", Label: "p50"}, legend{Class: "c5", Kind: "line", Label: "p99"})

	c.Caption = fmt.Sprintf("%s of each request (%s) at the time it went on the wire; failed requests in red (their %s is the time until they failed). Lines: p50 and p99 over a rolling window of %s consecutive successful requests within a phase. Y axis %s.",
		name, unitName, name, count(window), scale) + bandsCaption
	note := ""
	if drawn, total := nOK+nBad, len(samples); drawn < total {
		c.Caption += fmt.Sprintf(" %s of %s dots drawn: dots that would overlap are merged, every isolated one is kept.", count(drawn), count(total))
		note = fmt.Sprintf("%s scatter: %s requests (more than %s) drawn as %s dots, one per %.0f×%.0f cell of the chart; overlapping dots merged, every isolated point (an outlier) kept.",
			name, count(total), count(maxAllDots), count(drawn), dotCell, dotCell)
	}
	return c, note
}

func firstPositive(sorted []float64) float64 {
	for _, v := range sorted {
		if v > 0 {
			return v
		}
	}
	return 0
}

// concurrencyChart sets the client's requests in flight against the
// engine's running and waiting gauges.
func concurrencyChart(records []client.Record, rows []scrape.Row, span float64, phases []phaseSpan, failed []failedScrape) (*chart, []string) {
	c := newChart("concurrency", "Requests in flight: client vs engine")
	var notes []string
	inflight, step := inFlight(records, span)
	gauges, has := summedGauges(rows, scrape.RequestsRunning, scrape.RequestsWaiting)
	running, waiting := gauges[0], gauges[1]
	var total []xy
	if has[0] {
		total = slices.Clone(running)
		if has[1] {
			for i := range total {
				total[i].Y += waiting[i].Y
			}
		}
		if idx := lttbIndices(total, maxLinePoints); len(idx) < len(total) {
			notes = append(notes, fmt.Sprintf("Engine gauges: %s scrapes reduced to %s points (largest-triangle-three-buckets, which keeps peaks and troughs).",
				count(len(total)), count(len(idx))))
			total, running = pick(total, idx), pick(running, idx)
		}
	}
	top := 0.0
	for _, pts := range [][]xy{inflight, total, running} {
		for _, p := range pts {
			top = math.Max(top, p.Y)
		}
	}
	x, y := c.timeX(span), c.valueY(0, top, "requests")
	c.phaseBands(x, phases)
	caption := fmt.Sprintf("Client: requests handed to the transport whose stream had not ended, sampled every %s.", dur(step))
	if has[0] {
		base := make([]xy, len(running))
		for i, p := range running {
			base[i] = xy{X: p.X}
		}
		c.Paths = append(c.Paths, path{Class: "area c2", D: bandPath(base, running, x, y)})
		c.Legend = append(c.Legend, legend{Class: "c2", Kind: "area", Label: "engine running"})
		if has[1] {
			c.Paths = append(c.Paths, path{Class: "area c3", D: bandPath(running, total, x, y)})
			c.Legend = append(c.Legend, legend{Class: "c3", Kind: "area", Label: "engine waiting (stacked)"})
		}
		caption += " Engine: its requests_running gauge"
		if has[1] {
			caption += " with requests_waiting stacked on top"
		}
		caption += ", as each scrape read them (summed over targets). A gauge the engine refreshes rarely shows as steps."
	} else {
		caption += " The engine exposes no running/waiting gauges."
	}
	c.Paths = append(c.Paths, path{Class: "line c1", D: linePath(inflight, x, y)})
	c.Legend = append(c.Legend, legend{Class: "c1", Kind: "line", Label: "client in flight"})
	if n := failedRules(c, x, failed); n > 0 {
		c.Legend = append(c.Legend, legend{Class: "bad", Kind: "rule", Label: "failed scrape"})
	}
	c.Caption = caption + bandsCaption
	return c, notes
}

// kvChart draws the engine's KV-cache usage, one line per target.
func kvChart(rows []scrape.Row, span float64, phases []phaseSpan, failed []failedScrape) (*chart, []string) {
	c := newChart("kv-cache", "KV cache usage")
	series := perTargetGauge(rows, scrape.KVCacheUsage)
	if len(series) == 0 {
		c.Empty = "The engine exposes no KV-cache usage gauge, or no scrape succeeded."
		return c, nil
	}
	var notes []string
	peak := 0.0
	for i := range series {
		for j := range series[i].pts {
			series[i].pts[j].Y *= 100
			peak = math.Max(peak, series[i].pts[j].Y)
		}
		if idx := lttbIndices(series[i].pts, maxLinePoints); len(idx) < len(series[i].pts) {
			notes = append(notes, fmt.Sprintf("KV cache usage of %s: %s scrapes reduced to %s points (largest-triangle-three-buckets).",
				series[i].name, count(len(series[i].pts)), count(len(idx))))
			series[i].pts = pick(series[i].pts, idx)
		}
	}
	x, y := c.timeX(span), c.valueY(0, gaugeTop(peak, 100), "KV cache used (%)")
	c.phaseBands(x, phases)
	for i, s := range series {
		class := fmt.Sprintf("c%d", 1+i%8)
		c.Paths = append(c.Paths, path{Class: "line " + class, D: linePath(s.pts, x, y), Title: s.name})
		name := "kv_cache_usage"
		if len(series) > 1 {
			name = s.name
		}
		c.Legend = append(c.Legend, legend{Class: class, Kind: "line", Label: name})
	}
	if n := failedRules(c, x, failed); n > 0 {
		c.Legend = append(c.Legend, legend{Class: "bad", Kind: "rule", Label: "failed scrape"})
	}
	c.Caption = "The engine's KV-cache usage gauge (kv_cache_usage, as a percentage of its blocks) at each scrape." + bandsCaption
	return c, notes
}

// gaugeTop is the top of a gauge's axis: its peak with a quarter of
// headroom, so a 0.6 % signal fills the chart instead of hugging the floor
// of a 0–100 % one (decision 0801); never above the gauge's full scale
// unless the peak itself is, and never zero.
func gaugeTop(peak, full float64) float64 {
	switch {
	case peak >= full:
		return peak
	case peak <= 0 || math.IsNaN(peak):
		return full / 100
	}
	return math.Min(full, peak*1.25)
}

// failedRules marks failed scrapes on a run-clock chart, at most one per two
// viewBox units, and returns how many it marked.
func failedRules(c *chart, x axis, failed []failedScrape) int {
	last := math.Inf(-1)
	n := 0
	for _, f := range failed {
		px := x.at(f.at)
		if px-last < 2 || n == maxFailedMarks {
			continue
		}
		last = px
		n++
		c.Rules = append(c.Rules, rule{X: px, Class: "bad", Title: fmt.Sprintf("scrape of %s failed at %s: %s", orDash(f.target), dur(f.at), clip(orDash(f.err), errorTextRunes))})
	}
	return n
}
