package html

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/redact"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/latencytable"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/report/validity"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// page is everything report.html shows, computed and formatted: the
// template only lays it out.
type page struct {
	Title     string
	Subtitle  string
	Run       []fact
	Engine    []fact
	Gates     *gatesView // the gates' verdicts, first when the run has gates
	Health    healthView
	Tiles     []tile
	Headline  []tile      // the first section's figures (decision 0801)
	Lengths   []*chart    // prompt and output length histograms
	Spread    []spreadRow // each client latency's min, mean, std and max
	Tokens    []fact
	Latency   latencyView
	Timeline  []*chart // charts over the run clock
	CDF       []*chart
	CDFNote   string
	Sweep     *sweepView
	Search    *searchView
	Waterfall *waterfallView
	Findings  findingsView
	Phases    []phaseRow
	// PhaseGoodput: the scenario set an slo, so the phases carry goodput.
	PhaseGoodput bool
	Server       *serverView
	Errors       errorsView
	Notes        []string // how the page was drawn from the data: buckets, downsampling
	Footer       string

	// ServerTimeline is the engine's spans joined to the records (servertimeline.go).
	ServerTimeline *waterfallView
	// GPU is the GPU telemetry and the prefix cache (gpu.go).
	GPU *gpuView
}

type fact struct {
	Label, Value string
	Class        string // ok | warn | bad: colours the value
}

type tile struct {
	Label, Value, Unit, Sub string
	Class                   string
}

// build computes the page from the run. It does not modify in.
func build(in Input) page {
	s := in.Summary
	in = in.digested()
	records := in.Records

	p := page{
		Title:        "llmbench report: " + orDash(s.Run.Scenario),
		Subtitle:     s.Run.ID,
		Run:          runFacts(s),
		Engine:       engineFacts(s),
		Gates:        gatesOf(s.Gates),
		Health:       healthOf(s.Health),
		Tiles:        tilesOf(s),
		Tokens:       append(tokenFacts(s.Client), imageAndSessionFacts(s)...), // sessions.go
		Latency:      latencyOf(s),
		Findings:     findingsOf(s.Findings),
		Phases:       phaseRows(s.Phases),
		PhaseGoodput: slices.ContainsFunc(s.Phases, func(ph report.PhaseResult) bool { return ph.Client.Goodput != nil }),
		Server:       serverOf(s.Server),
		Errors:       errorsOf(records),
		Footer: fmt.Sprintf("llmbench %s · run %s · schema %s. This file is self-contained: no script, no font, no image or style sheet is fetched when it opens.",
			orDash(s.Run.Version), orDash(s.Run.ID), orDash(s.Schema)),
	}
	tl := timelineOf(s, in, in.Rows)
	p.Timeline, p.Notes = tl.charts, tl.notes
	var samples map[string][]float64
	if s.Server != nil {
		samples = clientSamplesOf(s, records, in.Digest)
	}
	p.CDF, p.CDFNote = cdfCharts(s.Server, samples)
	p.Sweep = sweepOf(s.Sweep)
	p.Headline = headlineOf(s, p.Tiles)
	p.Lengths, p.Spread = lengthCharts(s, records), spreadOf(s, records, in.Digest)
	p.Search = searchOf(s.Search)
	p.Waterfall = waterfallOf(s.Waterfall)
	p.ServerTimeline = serverTimelineOf(s.Timeline)
	p.GPU = gpuOf(s)
	notes := report.NotesOf(s)
	p.Health.Cautions = append(p.Health.Cautions, notes.Cautions...)
	for _, n := range notes.Tokens {
		p.Tokens = append(p.Tokens, fact{Label: "prompt lengths", Value: n})
	}
	p.Latency.Notes = append(notes.Latency, p.Latency.Notes...)
	return p
}

func runFacts(s report.Summary) []fact {
	r := s.Run
	out := []fact{
		{Label: "scenario", Value: orDash(r.Scenario)},
		{Label: "run", Value: orDash(r.ID)},
		{Label: "seed", Value: fmt.Sprint(r.Seed)},
		{Label: "started", Value: startedAt(r.StartedAt)},
		{Label: "measured", Value: dur(r.Duration)},
		{Label: "llmbench", Value: orDash(r.Version)},
	}
	if r.Description != "" {
		out = slices.Insert(out, 1, fact{Label: "about", Value: r.Description})
	}
	if r.Stopped != "" {
		out = append(out, fact{Label: "stopped early", Value: r.Stopped, Class: "bad"})
	}
	return out
}

func startedAt(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func engineFacts(s report.Summary) []fact {
	e := s.Engine
	out := []fact{
		{Label: "engine", Value: orDash(e.Kind)},
		{Label: "dialect", Value: orDash(e.Dialect)},
		{Label: "model", Value: orDash(e.Model)},
		{Label: "API", Value: orDash(e.BaseURL)},
		{Label: "metrics", Value: orDash(e.MetricsURL)},
	}
	for _, n := range e.Notes {
		out = append(out, fact{Label: "found out", Value: n})
	}
	if s.Server != nil && len(s.Server.Targets) > 1 {
		out = append(out, fact{Label: "scrape targets", Value: strings.Join(s.Server.Targets, ", ")})
	}
	return out
}

type healthView struct {
	Valid    bool
	Verdict  string
	Problems []stateView // the invalid states: why the numbers are not valid
	Warnings []stateView // the states that are warnings: the numbers stand
	Cautions []string    // what does not invalidate them but a reader should know
	Facts    []fact      // the driver's and the scraper's own record
	Client   []fact      // the client process: CPU, GC, scheduler
}

// stateView is one validity state (docs/decisions/0029) as the health
// section lists it: its name, what it says and what the latencies cover.
type stateView struct {
	Name, Severity, Says, Covers string
}

func healthOf(h report.Health) healthView {
	v := healthView{Valid: h.Valid, Verdict: "Valid: nothing made the numbers unrepresentative"}
	for _, st := range h.States {
		sv := stateView{Name: st.Name, Severity: string(st.Severity), Says: st.Says, Covers: st.Covers}
		if st.Severity == validity.Invalid {
			v.Problems = append(v.Problems, sv)
		} else {
			v.Warnings = append(v.Warnings, sv)
		}
	}
	switch {
	case !h.Valid:
		v.Verdict = "Not valid: read the numbers below with the problems in mind"
	case len(v.Warnings) > 0:
		v.Verdict = "Valid, with warnings: the numbers stand; weigh what the warnings say"
	}
	if h.ScrapeFailures > 0 {
		v.Cautions = append(v.Cautions, fmt.Sprintf("%s of %s scrapes of /metrics failed (marked in red on the engine charts)", count(h.ScrapeFailures), count(h.ScrapeFailures+h.ScrapeOK)))
	}
	if h.Retries > 0 {
		v.Cautions = append(v.Cautions, fmt.Sprintf("%s requests were resent after a kept-alive connection died before any response byte", count(h.Retries)))
	}
	if h.PartialLines > 0 {
		v.Cautions = append(v.Cautions, fmt.Sprintf("%s raw files ended in a torn line (a crash mid-write): that line was skipped", count(h.PartialLines)))
	}
	lag := "closed loop: requests go when a user is free"
	if h.ScheduleLag.N > 0 {
		lag = fmt.Sprintf("p50 %s · p99 %s · max %s", dur(h.ScheduleLag.P50), dur(h.ScheduleLag.P99), dur(h.ScheduleLag.Max))
	}
	connect := "no new connections"
	if h.Connect.N > 0 {
		connect = fmt.Sprintf("%s new · p50 %s · p99 %s", count(h.Connect.N), dur(h.Connect.P50), dur(h.Connect.P99))
	}
	v.Facts = []fact{
		{Label: "schedule lag", Value: lag},
		{Label: "send delay", Value: fmt.Sprintf("p50 %s · p99 %s (kept out of the latencies)", dur(h.SendDelay.P50), dur(h.SendDelay.P99))},
		{Label: "connections", Value: connect},
		{Label: "arrivals dropped / late", Value: count(h.DroppedArrivals) + " / " + count(h.LateArrivals), Class: badIf(h.DroppedArrivals > 0)},
		{Label: "retries", Value: count(h.Retries)},
		{Label: "not streamed / no [DONE]", Value: count(h.NotStreamed) + " / " + count(h.StreamsWithoutDone), Class: warnIf(h.NotStreamed > 0 || h.StreamsWithoutDone > 0)},
		{Label: "scrapes ok / failed", Value: count(h.ScrapeOK) + " / " + count(h.ScrapeFailures), Class: warnIf(h.ScrapeFailures > 0)},
	}
	c := h.Client
	sched := "not measured"
	if c.SchedLatencyP99_s > 0 {
		sched = dur(c.SchedLatencyP99_s) + " (how late the client's goroutines ran: a lower bound on its timestamps' error)"
	}
	saturated := "no"
	if c.Saturated {
		saturated = "yes: its latencies include its own delay"
	}
	others := "not measured"
	if c.HostOtherCPU != nil {
		others = pct(*c.HostOtherCPU) + " of the machine (the engine too, when it runs on this host)"
	}
	limit := ""
	switch {
	case c.Throttled_s > 0 && c.CPUQuota != nil:
		limit = fmt.Sprintf("%g cores: stopped the client %d times, %s in all", *c.CPUQuota, c.ThrottledPeriods, dur(c.Throttled_s))
	case c.Throttled_s > 0:
		limit = fmt.Sprintf("stopped the client %d times, %s in all", c.ThrottledPeriods, dur(c.Throttled_s))
	case c.CPUQuota != nil:
		limit = fmt.Sprintf("%g cores, never reached", *c.CPUQuota)
	}
	v.Client = []fact{
		{Label: "CPU", Value: fmt.Sprintf("%s of %d cores", pct(c.CPUUtilization), c.CPUCores)},
		{Label: "scheduler delay p99", Value: sched},
		{Label: "other processes", Value: others, Class: warnIf(c.Delay == "host_delayed")},
		{Label: "GC cycles", Value: count(c.GCCycles)},
		{Label: "GC policy", Value: orDash(c.GCPolicy)},
		{Label: "client saturated", Value: saturated, Class: badIf(c.Saturated)},
	}
	if limit != "" { // shown only where a limit was read or bit
		v.Client = append(v.Client, fact{Label: "container CPU limit", Value: limit, Class: badIf(c.Delay == "cpu_throttled")})
	}
	return v
}

func badIf(b bool) string {
	if b {
		return "bad"
	}
	return ""
}

func warnIf(b bool) string {
	if b {
		return "warn"
	}
	return ""
}

func tilesOf(s report.Summary) []tile {
	c := s.Client
	req := tile{Label: "requests ok", Value: count(c.Requests.OK), Sub: fmt.Sprintf("of %s sent", count(c.Requests.Sent))}
	if c.Requests.Failed > 0 {
		req.Sub += fmt.Sprintf(" · %s failed", count(c.Requests.Failed))
		req.Class = "bad"
	}
	tiles := []tile{
		req,
		{Label: "throughput", Value: num(c.Throughput.RequestsPerSec), Unit: "req/s", Sub: "successful requests per second"},
		{Label: "output tokens", Value: num(c.Throughput.OutputTokensPerSec), Unit: "tok/s", Sub: fmt.Sprintf("%s tok/s prompt + output", num(c.Throughput.TotalTokensPerSec))},
		latencyTile("TTFT", c.Latency.TTFT),
		latencyTile("ITL", c.Latency.ITL),
		latencyTile("E2E", c.Latency.E2E),
		errorTile(c.Requests),
		{Label: "measured", Value: dur(s.Run.Duration), Sub: fmt.Sprintf("%d phases, %d measured", len(s.Phases), countMeasured(s.Phases))},
	}
	tiles = withEndpointTiles(tiles, c) // endpoints.go

	tiles = append(tiles, sessionTiles(s.Sessions)...) // sessions.go
	if g := c.Goodput; g != nil {
		t := tile{Label: "goodput", Value: num(g.RequestsPerS), Unit: "req/s",
			Sub: fmt.Sprintf("%s met %s", pct(g.Fraction), g.SLO)}
		if g.Unmeasured > 0 {
			t.Sub += fmt.Sprintf(" · %s unmeasured, not counted", count(g.Unmeasured))
		}
		if g.Fraction < 0.9 {
			t.Class = "bad"
		}
		tiles = slices.Insert(tiles, 2, t)
	}
	return tiles
}

// errorTile is the error rate, Failed ÷ (Sent − Canceled) as the summary
// defines it, with its 95 % interval: a headline figure, in percent as
// every share on the page is (decision 0801).
func errorTile(r report.RequestCounts) tile {
	t := tile{Label: "error rate", Value: "—", Sub: "no request counted"}
	if n := r.Sent - r.Canceled; n > 0 {
		t.Value, t.Unit = strings.TrimSuffix(pct(float64(r.Failed)/float64(n)), " %"), "%"
		t.Sub = fmt.Sprintf("%s of %s failed", count(r.Failed), count(n))
		if b := r.FailedCI; b != nil {
			t.Sub = "(" + pct(b.Lo) + "–" + pct(b.Hi) + ") · " + t.Sub
		}
	}
	if r.Failed > 0 {
		t.Class = "bad"
	}
	return t
}

// latencyTile is a latency's p50 with, under it, its interval, its p99
// with its and the sample count; a figure too small a sample for its rank
// is marked.
func latencyTile(name string, d report.Dist) tile {
	p50 := figureOf(d.P50, report.IntervalOf(d.QuantileCI(50)))
	p99 := figureOf(d.P99, report.IntervalOf(d.QuantileCI(99)))
	t := tile{Label: name + " p50", Value: p50.V, Unit: "ms", Sub: "p99 " + p99.V + " ms"}
	if p50.TooFew {
		t.Value += latencytable.TooFewMark
	}
	if p99.TooFew {
		t.Sub = "p99 " + p99.V + latencytable.TooFewMark + " ms"
	}
	if p50.CI != "" {
		t.Sub = "(" + p50.CI + ") · " + t.Sub + " (" + p99.CI + ") · n " + count(d.N)
	}
	return t
}

func countMeasured(phases []report.PhaseResult) int {
	n := 0
	for _, ph := range phases {
		if ph.Measured {
			n++
		}
	}
	return n
}

func tokenFacts(c report.ClientSide) []fact {
	t := c.Tokens
	src := t.Source
	if len(t.BySource) > 0 {
		parts := make([]string, 0, len(t.BySource))
		for _, k := range slices.Sorted(maps.Keys(t.BySource)) {
			parts = append(parts, fmt.Sprintf("%s %s", k, count(t.BySource[k])))
		}
		src += " (" + strings.Join(parts, ", ") + ")"
	}
	out := []fact{
		{Label: "prompt tokens", Value: fmt.Sprintf("%s (the plan aimed for %s)", count(t.Prompt), count(t.PromptTarget))},
		{Label: "output tokens", Value: fmt.Sprintf("%s (max_tokens asked: %s)", count(t.Output), count(t.OutputTarget))},
		{Label: "cached prompt tokens", Value: count(t.Cached)},
		{Label: "output counts from", Value: orDash(src), Class: warnIf(t.Source == "chunks" || t.Source == "mixed")},
	}
	if t.Reasoning > 0 {
		out = append(out, fact{Label: "reasoning tokens", Value: count(t.Reasoning) + " (part of the output)"})
	}
	if t.Chunks > 0 {
		v := count(t.Chunks)
		if t.ChunksPerToken > 0 {
			v += fmt.Sprintf(" (%.2f per output token", t.ChunksPerToken)
			if t.PerChunkSource != "" {
				v += "; tokens per chunk from " + t.PerChunkSource
				if len(t.PerChunkBySource) > 0 {
					parts := make([]string, 0, len(t.PerChunkBySource))
					for _, k := range slices.Sorted(maps.Keys(t.PerChunkBySource)) {
						parts = append(parts, fmt.Sprintf("%s %s", k, count(t.PerChunkBySource[k])))
					}
					v += ": " + strings.Join(parts, ", ")
				}
			}
			v += ")"
		}
		out = append(out, fact{Label: "output chunks", Value: v})
	}
	if o := t.OutputShort; o != nil {
		out = append(out, fact{Label: "stopped before max_tokens", Value: fmt.Sprintf("%s of %s requests, %s of the planned output tokens missing",
			count(o.Requests), count(o.Of), pct(o.MissingFraction)), Class: "warn"})
	}
	return out
}

// latencyView is the client-versus-server latency table.
type latencyView struct {
	Quantiles []string // the run's percentiles, as the columns name them ("p99.9")
	Span      int      // the columns of one side: n, mean and the quantiles
	Rows      []latRow // TTFT, ITL, TPOT, E2E: both sides (and TTFC when it differs from TTFT)
	Engine    []latRow // what only the engine measures: queue, prefill, decode, ...
	NoServer  bool
	Notes     []string
	Timings   *timingsView // llama.cpp's per-request timings beside the client's
	// TooFew: some figure shown is too small a sample for its rank (the
	// legend explains the mark); Sketched: ITL's intervals came from a
	// sketch (the legend says so).
	TooFew, Sketched bool
}

// figure is a client figure in ms with its 95 % interval ("398.0–431.0",
// "" when the summary has none) and whether its sample is too small for
// its rank (marked latencytable.TooFewMark).
type figure struct {
	V, CI  string
	TooFew bool
}

func figureOf(v float64, ci latencytable.Interval) figure {
	return figure{V: ms(v), CI: ci.Range(ms), TooFew: ci.TooFew()}
}

// timingsView is llama.cpp's own account of its requests beside the
// client's measurements of them.
type timingsView struct {
	Requests string
	Rows     []timingRow
}

type timingRow struct {
	Name, N  string
	P50, P99 figure
}

func timingsOf(st *report.ServerTimings) *timingsView {
	if st == nil {
		return nil
	}
	v := &timingsView{Requests: count(st.Requests)}
	for _, r := range report.ServerTimingRows(st) {
		row := timingRow{Name: r.Name, N: count(r.Dist.N), P50: figure{V: "—"}, P99: figure{V: "—"}}
		if r.Dist.N > 0 {
			row.P50 = figureOf(r.Dist.P50, report.IntervalOf(r.Dist.QuantileCI(50)))
			row.P99 = figureOf(r.Dist.P99, report.IntervalOf(r.Dist.QuantileCI(99)))
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

type latRow struct {
	Name        string
	Help        string
	ClientN     string
	Client      []figure // mean, then each of the run's percentiles, in ms
	ServerN     string
	ServerMean  string       // ms, exact: the histogram's sum ÷ count
	Server      []serverCell // the run's percentiles; empty when ServerState says why
	ServerState string       // "" | absent | no /metrics
	Span        int          // the server columns, for ServerState to span
}

// serverCell is an engine quantile: what the histogram knows first (the
// bucket it lies in), the value interpolated inside it second.
type serverCell struct {
	Bound  string // "≤ 100 ms", or "> 400 ms" above the top bucket
	Bucket string // "bucket 0–100 ms" | "above the top bucket"
	Approx string // "≈ 50.0" interpolated, ms; empty above the top bucket
	Above  bool   // beyond the top finite bucket: unknowable above it
}

// String is the cell in one line: "≤ 100 ms (bucket 0–100 ms), ≈ 50.0".
func (c serverCell) String() string {
	s := c.Bound + " (" + c.Bucket + ")"
	if c.Approx != "" {
		s += ", " + c.Approx
	}
	return s
}

// quantileCell formats an engine quantile bucket first.
func quantileCell(e latencytable.Bucket) serverCell {
	if !e.OK {
		return serverCell{Bound: "—", Bucket: "not computed for this run"}
	}
	if e.AboveTop {
		return serverCell{Bound: "> " + ms(e.Low) + " ms", Bucket: "above the top bucket", Above: true}
	}
	return serverCell{Bound: "≤ " + ms(e.High) + " ms", Bucket: "bucket " + ms(e.Low) + "–" + ms(e.High) + " ms", Approx: "≈ " + ms(e.Value)}
}

// latencyOf draws report.LatencyTable: the numbers in ms, an engine
// quantile bucket first.
func latencyOf(s report.Summary) latencyView {
	t := report.LatencyTable(s)
	v := latencyView{NoServer: t.NoServer, Timings: timingsOf(s.Client.ServerTimings), Span: 2 + len(t.Percentiles)}
	for _, p := range t.Percentiles {
		v.Quantiles = append(v.Quantiles, rundir.PercentileName(p))
	}
	for _, r := range t.Rows {
		row := latRow{Name: r.Name, Help: r.Help, ClientN: count(r.Client.N), Span: v.Span}
		row.Client = append(row.Client, figure{V: "—"})
		if r.Client.N > 0 {
			row.Client[0] = figureOf(r.Client.Mean, r.Client.MeanCI)
		}
		for _, q := range r.Client.Quantiles {
			if q.OK && r.Client.N > 0 {
				f := figureOf(q.V, q.CI)
				v.TooFew = v.TooFew || f.TooFew
				row.Client = append(row.Client, f)
			} else {
				row.Client = append(row.Client, figure{V: "—"})
			}
		}
		v.Sketched = v.Sketched || (r.Client.Sketched && r.Client.N > 0)
		serverCells(&row, r.Server)
		v.Rows = append(v.Rows, row)
	}
	for _, r := range t.EngineOnly {
		row := latRow{Name: r.Name, Help: r.Help, Span: v.Span}
		serverCells(&row, r.Server)
		v.Engine = append(v.Engine, row)
	}
	if s.Server != nil {
		v.Notes = s.Server.Notes
	}
	return v
}

func serverCells(row *latRow, sv latencytable.Server) {
	if sv.State != latencytable.Measured {
		row.ServerState = string(sv.State)
		return
	}
	row.ServerN, row.ServerMean = num(sv.N), ms(sv.Mean)
	for _, q := range sv.Quantiles {
		row.Server = append(row.Server, quantileCell(q))
	}
}

type findingsView struct {
	Summary string
	Items   []findingView
}

type findingView struct {
	ID, Severity, Verdict string
	Evidence              []fact
}

func findingsOf(fs []report.Finding) findingsView {
	by := map[reconcile.Severity]int{}
	v := findingsView{}
	for _, f := range fs {
		by[f.Severity]++
		item := findingView{ID: f.ID, Severity: string(f.Severity), Verdict: f.Verdict}
		for _, k := range slices.Sorted(maps.Keys(f.Evidence)) {
			// An engine quantile's bucket reads as one bucket, bound first.
			if q, ok := strings.CutSuffix(k, "_lower_s"); ok {
				if hi, ok := f.Evidence[q+"_upper_s"]; ok {
					lo, up := dur(f.Evidence[k]), dur(hi)
					if l, ok := strings.CutSuffix(lo, " ms"); ok && strings.HasSuffix(up, " ms") {
						lo = l
					}
					item.Evidence = append(item.Evidence, fact{Label: q, Value: "≤ " + up + " (bucket " + lo + "–" + up + ")"})
					continue
				}
			}
			if q, ok := strings.CutSuffix(k, "_upper_s"); ok {
				if _, ok := f.Evidence[q+"_lower_s"]; ok {
					continue
				}
			}
			item.Evidence = append(item.Evidence, fact{Label: k, Value: evidenceValue(k, f.Evidence[k])})
		}
		v.Items = append(v.Items, item)
	}
	if len(fs) == 0 {
		v.Summary = "No findings: the comparison of both views had nothing to say."
		return v
	}
	noun := "findings"
	if len(fs) == 1 {
		noun = "finding"
	}
	v.Summary = fmt.Sprintf("%d %s: %d fail, %d warn, %d info.", len(fs), noun, by[reconcile.Fail], by[reconcile.Warn], by[reconcile.Info])
	return v
}

type phaseRow struct {
	Name, Measured, Start, Duration, Load                  string
	Sent, OK, Failed, ReqPerS, TokPerS, TTFT, E2E, Goodput string
}

func phaseRows(phases []report.PhaseResult) []phaseRow {
	out := make([]phaseRow, 0, len(phases))
	for _, ph := range phases {
		c := ph.Client
		row := phaseRow{
			Name: ph.Name, Measured: "no", Start: dur(ph.Start), Duration: dur(ph.Duration), Load: "—",
			Sent: count(c.Requests.Sent), OK: count(c.Requests.OK), Failed: count(c.Requests.Failed),
			ReqPerS: num(c.Throughput.RequestsPerSec), TokPerS: num(c.Throughput.OutputTokensPerSec),
			TTFT: p50p99(c.Latency.TTFT), E2E: p50p99(c.Latency.E2E), Goodput: "—",
		}
		if g := c.Goodput; g != nil {
			row.Goodput = fmt.Sprintf("%s (%s)", num(g.RequestsPerS), pct(g.Fraction))
		}
		if ph.Measured {
			row.Measured = "yes"
		}
		if ph.Load > 0 {
			row.Load = num(ph.Load) + " " + ph.LoadUnit
		}
		out = append(out, row)
	}
	return out
}

// p50p99 is a distribution's p50 and p99 in ms, each with its interval
// and too-few mark: "36.4 (30.7–40.8) / 73.8† (51.0–∞)".
func p50p99(d report.Dist) string {
	if d.N == 0 {
		return "— / —"
	}
	f := func(p, v float64) string {
		fig := figureOf(v, report.IntervalOf(d.QuantileCI(p)))
		out := fig.V
		if fig.TooFew {
			out += latencytable.TooFewMark
		}
		if fig.CI != "" {
			out += " (" + fig.CI + ")"
		}
		return out
	}
	return f(50, d.P50) + " / " + f(99, d.P99)
}

type serverView struct {
	Dialect  string
	Targets  string
	Counters []fact
	Gauges   []gaugeRow
	Replicas *replicaTable
}

type gaugeRow struct{ Name, N, Mean, Max, Last, Interval string }

type replicaTable struct {
	Counters []string
	Rows     []replicaRow
}

type replicaRow struct {
	Target string
	Values []string
}

func serverOf(s *report.ServerSide) *serverView {
	if s == nil {
		return nil
	}
	v := &serverView{Dialect: orDash(s.Dialect), Targets: orDash(strings.Join(s.Targets, ", "))}
	for _, k := range slices.Sorted(maps.Keys(s.Counters)) {
		v.Counters = append(v.Counters, fact{Label: k, Value: num(s.Counters[k])})
	}
	for _, k := range slices.Sorted(maps.Keys(s.Gauges)) {
		g := s.Gauges[k]
		interval := "never changed"
		if g.UpdateInterval > 0 {
			interval = dur(g.UpdateInterval)
		}
		// A share is in percent, as its chart and every share on the page
		// are (decision 0801): not 0.006 here beside 0.6 % there.
		value := num
		if scrape.Concept(k).Fraction() {
			value = pct
		}
		v.Gauges = append(v.Gauges, gaugeRow{Name: k, N: count(g.N), Mean: value(g.Mean), Max: value(g.Max), Last: value(g.Last), Interval: interval})
	}
	if len(s.Replicas) > 0 {
		t := &replicaTable{}
		names := map[string]bool{}
		for _, cs := range s.Replicas {
			for k := range cs {
				names[k] = true
			}
		}
		t.Counters = slices.Sorted(maps.Keys(names))
		for _, target := range slices.Sorted(maps.Keys(s.Replicas)) {
			row := replicaRow{Target: target}
			for _, k := range t.Counters {
				val, ok := s.Replicas[target][k]
				if !ok {
					row.Values = append(row.Values, "—")
					continue
				}
				row.Values = append(row.Values, num(val))
			}
			t.Rows = append(t.Rows, row)
		}
		v.Replicas = t
	}
	return v
}

type errorsView struct {
	Rows []errorRow
	More string // how many distinct messages were left out
}

type errorRow struct{ Count, Class, Status, Message string }

// errorsOf groups the failed requests by class, status and message, the
// most frequent first.
func errorsOf(records []client.Record) errorsView {
	type key struct {
		class  client.ErrorClass
		status int
		msg    string
	}
	counts := map[key]int{}
	for i := range records {
		r := &records[i]
		if r.OK() {
			continue
		}
		counts[key{r.ErrorClass, r.Status, r.Error}]++
	}
	keys := slices.Collect(maps.Keys(counts))
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a.class, b.class), cmp.Compare(a.status, b.status), cmp.Compare(a.msg, b.msg))
	})
	var v errorsView
	for i, k := range keys {
		if i == maxErrorRows {
			v.More = fmt.Sprintf("%d more distinct errors are not listed; requests.jsonl has every one.", len(keys)-maxErrorRows)
			break
		}
		status := "—"
		if k.status != 0 {
			status = fmt.Sprint(k.status)
		}
		v.Rows = append(v.Rows, errorRow{Count: count(counts[k]), Class: string(k.class), Status: status, Message: orDash(clip(redact.Text(k.msg), errorTextRunes))})
	}
	return v
}

// gatesView is the gates' verdicts: why a CI job passed or failed.
type gatesView struct {
	Passed   bool
	Outcome  string // passed | failed | inconclusive
	Class    string // the badge's: ok | bad | warn
	Verdict  string
	Baseline string
	Rows     []gateRow
}

type gateRow struct {
	Status, Class, Gate, Observed, Limit, Reason string
}

func gatesOf(g *report.GateVerdicts) *gatesView {
	if g == nil {
		return nil
	}
	v := &gatesView{Passed: g.Passed, Baseline: g.Baseline, Outcome: "passed", Class: "ok",
		Verdict: g.Counts()}
	switch {
	case g.Fail > 0 || g.Unevaluable > 0:
		v.Outcome, v.Class = "failed", "bad"
	case g.Inconclusive > 0 || !g.Passed:
		v.Outcome, v.Class = "inconclusive", "warn"
	}
	for _, r := range g.Results {
		class := map[string]string{"pass": "ok", "fail": "bad", "inconclusive": "warn", "error": "warn"}[r.Status]
		v.Rows = append(v.Rows, gateRow{Status: r.Status, Class: class, Gate: r.Gate,
			Observed: report.GateNumber(r.Observed, r.Unit, r.Status), Limit: report.GateNumber(r.Limit, r.Unit, ""), Reason: r.Reason})
	}
	return v
}
