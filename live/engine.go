package live

import (
	"time"

	"github.com/llmbench-org/llmbench/scrape"
)

// EngineLatency is one of the engine's latency histograms over the live
// window: how much it grew between the first and the last successful scrape
// of one target in the window. The engine knows its latencies only by
// bucket, so each quantile is an interpolated estimate that carries its
// bucket's bounds, as in the final report. Has is false when the engine
// exposes no such histogram or it counted nothing in the window.
type EngineLatency struct {
	Has       bool
	N         float64
	Mean      time.Duration
	Quantiles []scrape.Estimate // at Progress.Percentiles, seconds
}

// EngineLatencies are the engine's side of the live latency table.
type EngineLatencies struct{ TTFT, ITL, E2E EngineLatency }

// engineHist is the part of a scrape the live latency table reads.
type engineHist struct {
	at     time.Duration
	target string
	snap   scrape.Snapshot // the latency histograms only
}

var engineConcepts = []scrape.Concept{scrape.TTFT, scrape.ITL, scrape.E2E}

// addEngineRow keeps the latency histograms of a successful scrape; the
// slices are the scrape's own (never written after parsing), so nothing is
// copied. Scrapes come about once a second, so the window holds a handful.
func (w *window) addEngineRow(row *scrape.Row) {
	s := scrape.Snapshot{Dialect: row.Snapshot.Dialect, Histograms: map[scrape.Concept]scrape.Histogram{}}
	for _, c := range engineConcepts {
		if h, ok := row.Snapshot.Histograms[c]; ok {
			s.Histograms[c] = h
		}
	}
	// One target only: a delta across two engines means nothing.
	if n := len(w.engine); n > 0 && w.engine[n-1].target != row.Target {
		w.engine = w.engine[:0]
	}
	w.engine = append(w.engine, engineHist{at: row.At, target: row.Target, snap: s})
	cut := 0
	for cut < len(w.engine)-1 && row.At-w.engine[cut].at > w.span {
		cut++
	}
	w.engine = w.engine[cut:]
}

// engineLatencies reads the histograms' growth over the window that ends
// at now, at percentiles. Scrapes that stopped coming age out here, so a
// dead endpoint never shows an old window's figures as current.
func (w *window) engineLatencies(now time.Duration, percentiles []float64) EngineLatencies {
	held := w.engine
	for len(held) > 0 && now-held[0].at > w.span {
		held = held[1:]
	}
	if len(held) < 2 {
		return EngineLatencies{}
	}
	d := scrape.Delta(held[0].snap, held[len(held)-1].snap)
	read := func(c scrape.Concept) EngineLatency {
		h, ok := d.Histograms[c]
		mean, has := h.Mean()
		if !ok || !has {
			return EngineLatency{}
		}
		e := EngineLatency{Has: true, N: h.Count, Mean: seconds(mean), Quantiles: make([]scrape.Estimate, len(percentiles))}
		for i, p := range percentiles {
			e.Quantiles[i] = h.Quantile(p / 100)
		}
		return e
	}
	return EngineLatencies{TTFT: read(scrape.TTFT), ITL: read(scrape.ITL), E2E: read(scrape.E2E)}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
