package main

import (
	"math"
	"slices"
	"time"
)

// figErr is how far one figure a tool reported is from the engine's truth,
// in milliseconds: with ids, P50 is the median of the per-request signed
// figErr (tool − truth) and P99Abs the 99th percentile of their absolute
// values; without, P50 and P99Abs compare the two distributions' quantiles
// (tool p50 − truth p50, |tool p99 − truth p99|).
type figErr struct {
	N      int     `json:"n"`
	P50    float64 `json:"p50_ms"`
	P99Abs float64 `json:"p99_abs_ms"`
	// RelP50 is the median relative error, (tool − truth) ÷ truth, in %.
	RelP50 float64 `json:"rel_p50_pct"`
}

// figure picks one latency out of a request, on either side.
type figure struct {
	name  string
	tool  func(measured) (time.Duration, bool)
	truth func(truthOf) (time.Duration, bool)
}

var figures = []figure{
	{"ttft", func(m measured) (time.Duration, bool) { return m.ttft, m.hasTTFT }, func(t truthOf) (time.Duration, bool) { return t.ttft, t.ttft > 0 }},
	{"itl", func(m measured) (time.Duration, bool) { return m.itl, m.hasITL }, func(t truthOf) (time.Duration, bool) { return t.itl, t.hasITL }},
	{"e2e", func(m measured) (time.Duration, bool) { return m.e2e, true }, func(t truthOf) (time.Duration, bool) { return t.e2e, true }},
}

// joinErrors compares request by request: pairs is each tool request that
// reported success with its truth (matched by id by the caller).
func joinErrors(pairs []pair, f figure) figErr {
	var diffs, abs, rel []float64
	for _, p := range pairs {
		got, ok1 := f.tool(p.m)
		want, ok2 := f.truth(p.t)
		if !ok1 || !ok2 {
			continue
		}
		d := ms(got - want)
		diffs = append(diffs, d)
		abs = append(abs, math.Abs(d))
		if want > 0 {
			rel = append(rel, 100*float64(got-want)/float64(want))
		}
	}
	return figErr{N: len(diffs), P50: quantile(diffs, 0.5), P99Abs: quantile(abs, 0.99), RelP50: quantile(rel, 0.5)}
}

// distErrors compares the two distributions when a tool names no request.
func distErrors(ms []measured, ts []truthOf, f figure) figErr {
	var got, want []float64
	for _, m := range ms {
		if d, ok := f.tool(m); ok && m.ok {
			got = append(got, float64(d))
		}
	}
	for _, t := range ts {
		if d, ok := f.truth(t); ok && t.ok {
			want = append(want, float64(d))
		}
	}
	e := figErr{N: min(len(got), len(want))}
	if e.N == 0 {
		return e
	}
	g50, w50 := quantile(got, 0.5), quantile(want, 0.5)
	e.P50 = (g50 - w50) / 1e6
	e.P99Abs = math.Abs(quantile(got, 0.99)-quantile(want, 0.99)) / 1e6
	if w50 > 0 {
		e.RelP50 = 100 * (g50 - w50) / w50
	}
	return e
}

type pair struct {
	m measured
	t truthOf
}

// pairUp matches the tool's successful requests with the truth by id (the
// engine's id is the X-Request-Id the tool sent, its chunk id the
// response's id); unmatched counts the
// successful tool requests that had an id and no truth.
func pairUp(ms []measured, ts []truthOf) (pairs []pair, unmatched int) {
	byID := make(map[string]truthOf, len(ts))
	for _, t := range ts {
		byID[t.id] = t
		if t.headerID != "" {
			byID[t.headerID] = t
		}
		if t.chunkID != "" {
			byID[t.chunkID] = t
		}
	}
	for _, m := range ms {
		if !m.ok || m.id == "" {
			continue
		}
		if t, ok := byID[m.id]; ok {
			pairs = append(pairs, pair{m, t})
		} else {
			unmatched++
		}
	}
	return pairs, unmatched
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// quantile is the nearest-rank quantile of xs (sorted in place); 0 for none.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}
