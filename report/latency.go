package report

import (
	"maps"
	"slices"

	"github.com/llmbench-org/llmbench/internal/interval"
	"github.com/llmbench-org/llmbench/report/latencytable"
	"github.com/llmbench-org/llmbench/rundir"
)

// LatencyTable is the latency table of s that the terminal summary,
// report.md and report.html all draw: the client's distribution of each
// latency beside the engine's histogram of it, at s's percentiles, and the
// engine's histograms the client cannot see. TTFC has a row only when it
// differs from TTFT (some first chunk was reasoning or a tool call).
func LatencyTable(s Summary) latencytable.Table {
	ps := percentiles(s)
	t := latencytable.Table{Percentiles: ps, NoServer: s.Server == nil}
	lat := s.Client.Latency
	client := map[string]Dist{"ttft": lat.TTFT, "ttfc": lat.TTFC, "itl": lat.ITL, "tpot": lat.TPOT, "e2e": lat.E2E}
	for _, l := range latencytable.Latencies {
		row := latencytable.Row{Latency: l, Client: latencyClient(client[l.Key], ps)}
		switch {
		case l.Key != "ttfc":
			row.Server = latencyServer(s.Server, l.Key, ps)
		case !showTTFC(s.Client):
			continue
		default:
			row.Server.State = latencytable.NotKept // no engine keeps a time to first content
		}
		t.Rows = append(t.Rows, row)
	}
	if s.Server != nil {
		for _, k := range slices.Sorted(maps.Keys(s.Server.Latency)) {
			if _, both := client[k]; both {
				continue
			}
			l := latencytable.Latency{Key: k, Name: k, Help: "engine-side only: the client cannot see it"}
			t.EngineOnly = append(t.EngineOnly, latencytable.Row{Latency: l, Server: latencyServer(s.Server, k, ps)})
		}
	}
	return t
}

// percentiles are the quantiles a summary's tables show.
func percentiles(s Summary) []float64 {
	if len(s.Percentiles) == 0 {
		return rundir.DefaultPercentiles
	}
	return s.Percentiles
}

func latencyClient(d Dist, ps []float64) latencytable.Client {
	c := latencytable.Client{N: d.N, Mean: d.Mean, Quantiles: make([]latencytable.Value, len(ps)),
		Sketched: d.CI != nil && d.CI.Source == CISketch}
	if d.N > 0 {
		c.MeanCI = IntervalOf(d.MeanCI())
	}
	for i, p := range ps {
		v, ok := d.Quantile(p)
		c.Quantiles[i] = latencytable.Value{V: v, OK: ok && d.N > 0}
		if d.N > 0 {
			c.Quantiles[i].CI = IntervalOf(d.QuantileCI(p))
		}
	}
	return c
}

// IntervalOf is an interval as the tables hold it: Known only when the
// summary had one (ok).
func IntervalOf(iv interval.Interval, ok bool) latencytable.Interval {
	if !ok {
		return latencytable.Interval{}
	}
	return latencytable.Interval{Lo: iv.Lo, Hi: iv.Hi, Known: true}
}

func latencyServer(srv *ServerSide, key string, ps []float64) latencytable.Server {
	if srv == nil {
		return latencytable.Server{State: latencytable.NoMetrics}
	}
	d, ok := srv.Latency[key]
	if !ok {
		return latencytable.Server{State: latencytable.Absent}
	}
	// The mean is exact (the histogram's _sum over _count); the quantiles
	// are only as good as the buckets.
	out := latencytable.Server{N: d.N, Mean: d.Mean, Quantiles: make([]latencytable.Bucket, len(ps))}
	for i, p := range ps {
		if e, ok := d.Quantile(p); ok {
			out.Quantiles[i] = latencytable.Bucket{Value: e.Value, Low: e.Bucket[0], High: e.Bucket[1], AboveTop: e.AboveTop, OK: true}
		}
	}
	return out
}
