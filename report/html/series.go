package html

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/quantile"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
	"github.com/llmbench-org/llmbench/scrape"
)

// Limits that keep a long or large run's page a few MB: every series is
// reduced to about what the chart can show, and the page says so.
const (
	maxBuckets     = 400   // time buckets per run-clock chart
	maxLinePoints  = 1000  // points per line (gauges, in-flight)
	maxAllDots     = 5000  // a scatter of more requests is thinned
	minWindow      = 20    // requests per rolling-quantile window, at least
	maxWindows     = 200   // rolling-quantile windows per run, about
	dotCell        = 3.0   // scatter: one dot per cell of this many viewBox units
	maxFailedMarks = 200   // failed scrapes marked on a chart
	maxErrorRows   = 10    // distinct error messages listed
	errorTextRunes = 300   // longest error message shown
	longRunSeconds = 600.0 // from here the run clock reads m:ss
)

// phaseSpan is a phase on the run clock, in seconds.
type phaseSpan struct {
	Name       string
	Start, End float64
	Measured   bool
}

func phaseSpans(phases []report.PhaseResult) []phaseSpan {
	out := make([]phaseSpan, 0, len(phases))
	for _, ph := range phases {
		out = append(out, phaseSpan{Name: ph.Name, Start: ph.Start, End: ph.Start + ph.Duration, Measured: ph.Measured})
	}
	return out
}

// runSpan is how far the run clock reached: the last phase end, request end
// or scrape, in seconds.
func runSpan(phases []phaseSpan, records []client.Record, rows []scrape.Row) float64 {
	var end time.Duration
	for i := range records {
		end = max(end, records[i].End, records[i].Sent)
	}
	for i := range rows {
		end = max(end, rows[i].At)
	}
	span := end.Seconds()
	for _, ph := range phases {
		span = math.Max(span, ph.End)
	}
	return span
}

// bucketWidth is the run-clock bucket (seconds) rates are counted in: one
// second, or the smallest round width that keeps span within maxBuckets.
func bucketWidth(span float64) float64 {
	for _, s := range timeSteps {
		if s >= 1 && span/s <= maxBuckets {
			return s
		}
	}
	return timeSteps[len(timeSteps)-1]
}

// bucketed counts values per bucket of a run clock: bucket i covers
// [i·width, (i+1)·width); the last one ends at span, and one shorter than
// half a width joins its neighbour so an edge does not read as a spike.
type bucketed struct {
	width float64
	span  float64
	sums  []float64
}

func newBucketed(span, width float64) *bucketed {
	n := max(1, int(math.Ceil(span/width-1e-9)))
	if n > 1 && span-float64(n-1)*width < width/2 {
		n--
	}
	return &bucketed{width: width, span: span, sums: make([]float64, n)}
}

func (b *bucketed) add(at, v float64) {
	i := int(at / b.width)
	if i < 0 || at > b.span {
		return
	}
	b.sums[min(i, len(b.sums)-1)] += v
}

// rates divides each bucket's sum by the time it covers.
func (b *bucketed) rates() []xy {
	out := make([]xy, len(b.sums))
	for i, s := range b.sums {
		start := float64(i) * b.width
		end := start + b.width
		if i == len(b.sums)-1 {
			end = b.span
		}
		out[i] = xy{X: start, Y: s / math.Max(end-start, 1e-9)}
	}
	return out
}

// throughput is what finished and what streamed per second of the run clock.
type throughput struct {
	width          float64
	okPerS, failed []xy
	anyFailed      bool
	tokensPerS     []xy
	tokensFrom     string // chunks | usage
}

// throughputOf counts completions at their end and output tokens at the
// arrival of the chunks that carried them (a record without chunks counts
// its usage total at its end).
func throughputOf(records []client.Record, span float64) throughput {
	in := Input{Records: records}.digested()
	return throughputFrom(in.Records, in.Chunks, &in.Digest.Of(nil).Arrivals, span)
}

// throughputFrom is throughputOf from the records' digests: tokens by
// arrival in chunkdigest.BinWidth bins, each counted at its start (the
// buckets are whole seconds or more, so a bin never straddles two).
func throughputFrom(records []client.Record, chunks []chunkdigest.Request, arrivals *chunkdigest.Bins, span float64) throughput {
	w := bucketWidth(span)
	ok, failed, tokens := newBucketed(span, w), newBucketed(span, w), newBucketed(span, w)
	t := throughput{width: w, tokensFrom: "chunks"}
	for i := range records {
		r := &records[i]
		end := r.End.Seconds()
		if r.OK() {
			ok.add(end, 1)
		} else {
			failed.add(end, 1)
			t.anyFailed = true
		}
		if chunks[i].Chunks == 0 && r.OutputTokens > 0 {
			tokens.add(end, float64(r.OutputTokens))
			t.tokensFrom = "usage"
		}
	}
	arrivals.Each(func(at time.Duration, n int64) { tokens.add(at.Seconds(), float64(n)) })
	t.okPerS, t.failed, t.tokensPerS = ok.rates(), failed.rates(), tokens.rates()
	return t
}

// latencySample is one request's latency (seconds) at its send time.
type latencySample struct {
	sent, v float64
	ok      bool
	phase   string
}

// ttftSamples and e2eSamples gather the scatter of requests by send time.
// Failed requests keep the latency they reached (E2E is then the time to
// failure), drawn apart.
func ttftSamples(records []client.Record) []latencySample {
	out := make([]latencySample, 0, len(records))
	for i := range records {
		r := &records[i]
		if d, ok := r.TTFT(); ok {
			out = append(out, latencySample{sent: r.SentOnWire().Seconds(), v: d.Seconds(), ok: r.OK(), phase: r.Phase})
		}
	}
	return out
}

func e2eSamples(records []client.Record) []latencySample {
	out := make([]latencySample, 0, len(records))
	for i := range records {
		r := &records[i]
		if r.End > 0 && r.End >= r.SentOnWire() {
			out = append(out, latencySample{sent: r.SentOnWire().Seconds(), v: r.E2E().Seconds(), ok: r.OK(), phase: r.Phase})
		}
	}
	return out
}

// rollingQuantiles is p50 and p99 of the successful samples over a window
// of consecutive requests in send order, stepped by half a window and placed
// at the window's middle send time. A window of requests, not of time, keeps
// the estimate steady where requests are sparse and sharp where they crowd.
// Windows stay inside a phase (a NaN point separates phases), so a line
// never bridges the change of load between them. window is how many
// requests each point summarises.
func rollingQuantiles(samples []latencySample) (p50, p99 []xy, window int) {
	ok := make([]latencySample, 0, len(samples))
	for _, s := range samples {
		if s.ok {
			ok = append(ok, s)
		}
	}
	if len(ok) == 0 {
		return nil, nil, 0
	}
	slices.SortStableFunc(ok, func(a, b latencySample) int { return cmp.Compare(a.sent, b.sent) })
	window = min(len(ok), max(minWindow, len(ok)/maxWindows))
	buf := make([]float64, window)
	for start := 0; start < len(ok); {
		end := start + 1
		for end < len(ok) && ok[end].phase == ok[start].phase {
			end++
		}
		if start > 0 {
			p50, p99 = append(p50, xy{ok[start].sent, math.NaN()}), append(p99, xy{ok[start].sent, math.NaN()})
		}
		group := ok[start:end]
		w := min(window, len(group))
		step := max(1, w/2)
		for lo := 0; ; lo += step {
			hi := min(lo+w, len(group))
			lo = hi - w // the last window ends at the phase's last request
			vals := buf[:w]
			for i, s := range group[lo:hi] {
				vals[i] = s.v
			}
			sort.Float64s(vals)
			x := group[lo+w/2].sent
			p50 = append(p50, xy{x, quantile.OfSorted(0.5, vals)})
			p99 = append(p99, xy{x, quantile.OfSorted(0.99, vals)})
			if hi == len(group) {
				break
			}
		}
		start = end
	}
	return p50, p99, window
}

// drawDots draws every point, or thins them (thinDots) when thin is set.
func drawDots(pts []xy, x, y axis, thin bool) (string, int) {
	if thin {
		return thinDots(pts, x, y)
	}
	var p pathBuilder
	for _, pt := range pts {
		p.dot(x.at(pt.X), y.at(pt.Y))
	}
	return p.String(), len(pts)
}

// thinDots draws a scatter keeping one dot per dotCell square of the chart:
// dots that would overlap anyway merge, while every isolated point (an
// outlier) is still drawn. It returns the path data and how many it drew.
func thinDots(pts []xy, x, y axis) (string, int) {
	type cell struct{ i, j int32 }
	seen := make(map[cell]struct{}, min(len(pts), 1<<14))
	var p pathBuilder
	drawn := 0
	for _, pt := range pts {
		px, py := x.at(pt.X), y.at(pt.Y)
		c := cell{int32(math.Floor(px / dotCell)), int32(math.Floor(py / dotCell))}
		if _, dup := seen[c]; dup {
			continue
		}
		seen[c] = struct{}{}
		p.dot(px, py)
		drawn++
	}
	return p.String(), drawn
}

// inFlight samples how many requests the client had in flight (handed to
// the transport, stream not yet ended) at about maxLinePoints instants.
func inFlight(records []client.Record, span float64) (pts []xy, step float64) {
	starts := make([]float64, 0, len(records))
	ends := make([]float64, 0, len(records))
	for i := range records {
		r := &records[i]
		if r.End < r.Sent {
			continue
		}
		starts = append(starts, r.Sent.Seconds())
		ends = append(ends, r.End.Seconds())
	}
	slices.Sort(starts)
	slices.Sort(ends)
	step = math.Max(0.1, span/maxLinePoints)
	var si, ei int
	for i := 0; ; i++ {
		t := float64(i) * step
		if t > span+1e-9 {
			break
		}
		for si < len(starts) && starts[si] <= t {
			si++
		}
		for ei < len(ends) && ends[ei] <= t {
			ei++
		}
		pts = append(pts, xy{X: t, Y: float64(si - ei)})
	}
	return pts, step
}

// gaugeSeries is one canonical gauge over the run: summed over targets
// (each target's latest value) for counts, or per target for fractions.
type gaugeSeries struct {
	name string
	pts  []xy
}

// summedGauges follows each concept over the successful scrapes, summing
// the latest value of every target at each scrape. All concepts share the
// scrape times, so they can be stacked; ok is false for a concept no scrape
// had.
func summedGauges(rows []scrape.Row, concepts ...scrape.Concept) (series [][]xy, ok []bool) {
	latest := make([]map[string]float64, len(concepts))
	series, ok = make([][]xy, len(concepts)), make([]bool, len(concepts))
	for i := range latest {
		latest[i] = map[string]float64{}
	}
	for _, row := range sortedRows(rows) {
		if !row.OK || row.Snapshot == nil {
			continue
		}
		for i, c := range concepts {
			if v, has := row.Snapshot.Gauges[c]; has {
				latest[i][row.Target] = v
				ok[i] = true
			}
		}
		for i := range concepts {
			var sum float64
			for _, v := range latest[i] {
				sum += v
			}
			series[i] = append(series[i], xy{X: row.At.Seconds(), Y: sum})
		}
	}
	return series, ok
}

// perTargetGauge follows one gauge separately for each target, targets in
// order of first appearance.
func perTargetGauge(rows []scrape.Row, c scrape.Concept) []gaugeSeries {
	var out []gaugeSeries
	index := map[string]int{}
	for _, row := range sortedRows(rows) {
		if !row.OK || row.Snapshot == nil {
			continue
		}
		v, has := row.Snapshot.Gauges[c]
		if !has {
			continue
		}
		i, seen := index[row.Target]
		if !seen {
			i = len(out)
			index[row.Target] = i
			out = append(out, gaugeSeries{name: redact.URL(row.Target)})
		}
		out[i].pts = append(out[i].pts, xy{X: row.At.Seconds(), Y: v})
	}
	return out
}

// failedScrape is a scrape attempt that got nothing.
type failedScrape struct {
	at     float64
	target string
	err    string
}

func failedScrapes(rows []scrape.Row) []failedScrape {
	var out []failedScrape
	for _, row := range sortedRows(rows) {
		if !row.OK {
			out = append(out, failedScrape{at: row.At.Seconds(), target: redact.URL(row.Target), err: redact.Text(row.Error)})
		}
	}
	return out
}

// sortedRows orders scrape rows by run-clock time (several targets' rows
// interleave in the file); the caller's slice is left alone.
func sortedRows(rows []scrape.Row) []scrape.Row {
	if slices.IsSortedFunc(rows, byAt) {
		return rows
	}
	out := slices.Clone(rows)
	slices.SortStableFunc(out, byAt)
	return out
}

func byAt(a, b scrape.Row) int {
	switch {
	case a.At < b.At:
		return -1
	case a.At > b.At:
		return 1
	}
	return 0
}

// lttbIndices picks n of the points by largest-triangle-three-buckets: the
// first and the last, and from each of n−2 buckets the point forming the
// largest triangle with the point chosen before it and the mean of the next
// bucket. The line keeps its peaks and troughs at a fraction of the points.
// All indices are returned when there are no more than n points.
func lttbIndices(pts []xy, n int) []int {
	if n >= len(pts) || n < 3 {
		idx := make([]int, len(pts))
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	out := make([]int, 0, n)
	out = append(out, 0)
	size := float64(len(pts)-2) / float64(n-2)
	prev := 0
	for b := 0; b < n-2; b++ {
		lo := int(float64(b)*size) + 1
		hi := int(float64(b+1)*size) + 1
		// The mean of the next bucket (the last point for the last bucket).
		nlo, nhi := hi, min(int(float64(b+2)*size)+1, len(pts))
		if b == n-3 {
			nlo, nhi = len(pts)-1, len(pts)
		}
		var mx, my float64
		for _, p := range pts[nlo:nhi] {
			mx += p.X
			my += p.Y
		}
		mx /= float64(nhi - nlo)
		my /= float64(nhi - nlo)
		best, bestArea := lo, -1.0
		a := pts[prev]
		for i := lo; i < hi; i++ {
			area := math.Abs((a.X-mx)*(pts[i].Y-a.Y) - (a.X-pts[i].X)*(my-a.Y))
			if area > bestArea {
				best, bestArea = i, area
			}
		}
		out = append(out, best)
		prev = best
	}
	return append(out, len(pts)-1)
}

// pick returns the points at idx.
func pick(pts []xy, idx []int) []xy {
	out := make([]xy, len(idx))
	for i, j := range idx {
		out[i] = pts[j]
	}
	return out
}
