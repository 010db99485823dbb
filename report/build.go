package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/scrape/trace"
)

// Build reads a run directory's raw files (run.json, requests.jsonl,
// scrapes.jsonl) and computes its Summary. It only reads: the same directory
// always gives the same Summary, so `llmbench report DIR` can rebuild it.
func Build(dir string) (Summary, error) {
	var meta RunMeta
	b, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		return Summary{}, fmt.Errorf("read run: %w", err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return Summary{}, fmt.Errorf("%s: %w", filepath.Join(dir, RunFile), err)
	}

	var records []client.Record
	partialReq, err := ReadJSONL(filepath.Join(dir, RequestsFile), func(r *client.Record) error {
		records = append(records, *r)
		return nil
	})
	if err != nil {
		return Summary{}, err
	}
	var rows []scrape.Row
	partialScr, err := ReadJSONL(filepath.Join(dir, ScrapesFile), func(r *scrape.Row) error {
		rows = append(rows, *r)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Summary{}, err
	}
	traces, err := readTraceLog(filepath.Join(dir, TraceLogFile))
	if err != nil {
		return Summary{}, err
	}
	return Compute(meta, records, rows, traces, countTrue(partialReq, partialScr)), nil
}

// readTraceLog reads the engine's trace log when the run has one.
func readTraceLog(path string) ([]trace.Event, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read trace log: %w", err)
	}
	defer f.Close()
	log, err := trace.Read(f)
	if err != nil {
		return nil, fmt.Errorf("read trace log %s: %w", path, err)
	}
	return log.Events, nil
}

// Compute builds the Summary from values already in memory: the run's
// metadata, every client record, every scrape row, and the engine's trace
// events (nil when it has none).
func Compute(meta RunMeta, records []client.Record, rows []scrape.Row, traces []trace.Event, partialLines int) Summary {
	// Requests sorted by plan index so every derived list has one order.
	slices.SortStableFunc(records, func(a, b client.Record) int { return a.Index - b.Index })

	s := Summary{
		Schema: SummarySchema,
		Run: RunInfo{ID: meta.ID, Scenario: meta.Scenario, Description: meta.Description, Seed: meta.Seed, StartedAt: meta.StartedAt,
			Version: meta.Version, Stopped: meta.Stopped},
		Engine:   meta.Engine,
		Findings: []Finding{},
	}

	measured := map[string]bool{}
	var measuredDur time.Duration
	for _, ph := range meta.Phases {
		if ph.Measured {
			measured[ph.Name] = true
			measuredDur += ph.End - ph.Start
		}
	}
	// A run without phase bookkeeping (e.g. cut short before any phase ended)
	// measures everything it has.
	inMeasured := func(phase string) bool { return len(measured) == 0 || measured[phase] }
	if len(measured) == 0 {
		measuredDur = spanOf(records)
	}

	var mrecs []client.Record
	for _, r := range records {
		if inMeasured(r.Phase) {
			mrecs = append(mrecs, r)
		}
	}
	s.Client = clientSide(mrecs, measuredDur)
	s.Client.Goodput = goodputOf(mrecs, measuredDur, meta.SLO)
	s.Run.Duration = measuredDur.Seconds()

	for _, ph := range meta.Phases {
		var prec []client.Record
		for _, r := range records {
			if r.Phase == ph.Name {
				prec = append(prec, r)
			}
		}
		pc := clientSide(prec, ph.End-ph.Start)
		pc.Goodput = goodputOf(prec, ph.End-ph.Start, meta.SLO)
		s.Phases = append(s.Phases, PhaseResult{
			Name: ph.Name, Measured: ph.Measured, Start: ph.Start.Seconds(),
			Duration: (ph.End - ph.Start).Seconds(), Load: ph.Load, LoadUnit: ph.LoadUnit,
			Client: pc,
			Server: serverSide(meta, []PhaseMeta{ph}, rows, samplesOf(prec)),
		})
	}

	s.Sweep = sweepOf(s.Phases)
	s.Health = health(meta, mrecs, rows, partialLines)
	s.Server = serverSide(meta, measuredPhases(meta), rows, samplesOf(mrecs))
	// An engine whose dialect was left to detection is reconciled in the
	// dialect its scrapes were recognised as.
	dialect := meta.Engine.Dialect
	if dialect == "" && s.Server != nil {
		dialect = s.Server.Dialect
		s.Engine.Dialect = dialect
	}
	in := reconcile.Input{Records: records, Rows: rows, Dialect: dialect, Traces: traces, Origin: meta.StartedAt}
	for _, ph := range meta.Phases {
		in.Windows = append(in.Windows, reconcile.Window{Name: ph.Name, Measured: ph.Measured, Start: ph.Start, End: ph.End,
			Before: ph.Before, After: ph.After, Settle: ph.Settle})
	}
	if f := reconcile.Reconcile(in); len(f) > 0 {
		s.Findings = f
	}
	if len(traces) > 0 {
		w := reconcile.Waterfall(mrecs, traces, meta.StartedAt)
		s.Waterfall = &w
	}
	return s
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// spanOf is the time from the first send to the last end among records.
func spanOf(records []client.Record) time.Duration {
	var first, last time.Duration = -1, 0
	for _, r := range records {
		if first < 0 || r.Sent < first {
			first = r.Sent
		}
		last = max(last, r.End)
	}
	if first < 0 {
		return 0
	}
	return last - first
}

// clientSamples are the client's latency samples (seconds) of the
// quantities the engine also keeps histograms of.
type clientSamples map[scrape.Concept][]float64

// samplesOf gathers them from the successful records.
func samplesOf(records []client.Record) clientSamples {
	out := clientSamples{}
	var itls []time.Duration
	for i := range records {
		r := &records[i]
		if !r.OK() {
			continue
		}
		if d, ok := r.TTFT(); ok {
			out[scrape.TTFT] = append(out[scrape.TTFT], d.Seconds())
		}
		if d, ok := r.TPOT(); ok {
			out[scrape.TPOT] = append(out[scrape.TPOT], d.Seconds())
		}
		out[scrape.E2E] = append(out[scrape.E2E], r.E2E().Seconds())
		itls = r.ITLs(itls[:0])
		for _, d := range itls {
			out[scrape.ITL] = append(out[scrape.ITL], d.Seconds())
		}
	}
	return out
}

func clientSide(records []client.Record, dur time.Duration) ClientSide {
	c := ClientSide{Requests: RequestCounts{Errors: map[string]int{}}}
	bySource := map[string]int{}
	var ttft, itl, tpot, e2e []float64
	var itlBuf []time.Duration
	for i := range records {
		r := &records[i]
		c.Requests.Sent++
		if !r.OK() {
			c.Requests.Failed++
			c.Requests.Errors[string(r.ErrorClass)]++
			if _, seen := c.Requests.ErrorSamples[string(r.ErrorClass)]; !seen {
				if c.Requests.ErrorSamples == nil {
					c.Requests.ErrorSamples = map[string]string{}
				}
				c.Requests.ErrorSamples[string(r.ErrorClass)] = r.Error
			}
			continue
		}
		c.Requests.OK++
		c.Tokens.Prompt += r.PromptTokens
		c.Tokens.Output += r.OutputTokens
		c.Tokens.Cached += r.CachedTokens
		c.Tokens.PromptTarget += r.TargetPromptTokens
		c.Tokens.OutputTarget += r.MaxTokens
		bySource[string(r.TokenSource)]++
		if d, ok := r.TTFT(); ok {
			ttft = append(ttft, d.Seconds())
		}
		if d, ok := r.TPOT(); ok {
			tpot = append(tpot, d.Seconds())
		}
		e2e = append(e2e, r.E2E().Seconds())
		itlBuf = r.ITLs(itlBuf[:0])
		for _, d := range itlBuf {
			itl = append(itl, d.Seconds())
		}
	}
	switch len(bySource) {
	case 0:
		c.Tokens.Source = "none"
	case 1:
		for k := range bySource {
			c.Tokens.Source = k
		}
	default:
		c.Tokens.Source = "mixed"
	}
	if len(bySource) > 1 {
		c.Tokens.BySource = bySource
	}
	if dur > 0 {
		sec := dur.Seconds()
		c.Throughput = Throughput{
			RequestsPerSec:     float64(c.Requests.OK) / sec,
			OutputTokensPerSec: float64(c.Tokens.Output) / sec,
			TotalTokensPerSec:  float64(c.Tokens.Output+c.Tokens.Prompt) / sec,
		}
	}
	c.Latency = Latencies{TTFT: distOf(ttft), ITL: distOf(itl), TPOT: distOf(tpot), E2E: distOf(e2e)}
	return c
}

// distOf sorts xs in place and summarises it.
func distOf(xs []float64) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	sort.Float64s(xs)
	q := func(p float64) float64 { return stat.Quantile(p, stat.LinInterp, xs, nil) }
	return Dist{N: len(xs), Mean: stat.Mean(xs, nil), P50: q(0.5), P90: q(0.9), P95: q(0.95), P99: q(0.99), Max: xs[len(xs)-1]}
}

func health(meta RunMeta, records []client.Record, rows []scrape.Row, partialLines int) Health {
	h := Health{
		DroppedArrivals: meta.DroppedArrivals, LateArrivals: meta.LateArrivals,
		PartialLines: partialLines, Client: meta.Client,
	}
	var lag, connect, sendDelay []float64
	for i := range records {
		r := &records[i]
		sendDelay = append(sendDelay, r.SendDelay().Seconds())
		if r.Intended > 0 { // closed-loop requests have no intended time: they go when a user is free
			lag = append(lag, max(0, r.ScheduleLag()).Seconds())
		}
		if r.ConnectDur > 0 {
			connect = append(connect, r.ConnectDur.Seconds())
		}
		h.Retries += r.Retries
	}
	h.ScheduleLag, h.Connect, h.SendDelay = distOf(lag), distOf(connect), distOf(sendDelay)
	for _, row := range rows {
		if row.OK {
			h.ScrapeOK++
		} else {
			h.ScrapeFailures++
		}
	}
	if h.DroppedArrivals > 0 {
		h.Problems = append(h.Problems, fmt.Sprintf("%d arrivals were dropped: the offered load was not sent", h.DroppedArrivals))
	}
	if meta.Client.Saturated {
		h.Problems = append(h.Problems, "the client itself was saturated: its latencies include its own delay")
	}
	if meta.Stopped != "" {
		h.Problems = append(h.Problems, "the run stopped early: "+meta.Stopped)
	}
	h.Valid = len(h.Problems) == 0
	return h
}
