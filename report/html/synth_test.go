package html

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/scrape/trace"
)

// synth describes a synthetic run: a warm-up and three measured phases of
// rising open-loop load against an engine that saturates in the last two.
// The same values give the same run, byte for byte (seeded, fixed times).
type synth struct {
	seed      uint64
	rateScale float64 // multiplies every phase's request rate
	stretch   float64 // multiplies every phase's duration
	chunks    int     // most content chunks per request (tokens are spread over them)
	failEvery int     // every k-th request fails (0: none)
	hostile   bool    // scenario, phase, model and error strings carry markup
	traces    bool    // the engine writes a trace log (a waterfall)
	spread    float64 // log-normal noise on TTFT and ITL: scatters the dots
	service   float64 // requests/s the engine completes at most, before rateScale (0: synthServiceRate)
	noMetrics bool    // the engine has no /metrics: no scrapes, no boundary snapshots
	agentic   bool    // requests belong to sessions and some carry images (sessions_test.go)
	gpu       bool    // a DCGM exporter reports two GPUs (gpusynth_test.go)
}

var synthStart = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

const synthTarget = "http://engine.test:30000/metrics"

// hostileText is markup that must show as text wherever it lands.
const hostileText = `<script>alert("pwn")</script><img src=x onerror=alert(1)> & </table><!-- "'`

type synthPhase struct {
	name     string
	measured bool
	dur      float64 // seconds
	rate     float64 // requests/s
}

func (s synth) phases() []synthPhase {
	ps := []synthPhase{{"warmup", false, 3, 2}, {"rate-4", true, 10, 4}, {"rate-8", true, 10, 8}, {"rate-16", true, 10, 16}, {"rate-24", true, 10, 24}}
	for i := range ps {
		ps[i].dur *= s.stretch
		ps[i].rate *= s.rateScale
		if s.hostile && ps[i].measured {
			ps[i].name += hostileText
		}
	}
	return ps
}

// Engine histogram bounds, SGLang's defaults (engine-metrics.md).
var (
	ttftBounds  = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400}
	itlBounds   = []float64{0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.0, 2.0, 4.0, 6.0, 8.0}
	e2eBounds   = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400}
	queueBounds = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
)

const (
	synthCapacity    = 8  // running requests the engine holds; the rest wait
	synthServiceRate = 12 // requests/s the engine completes at most
)

func sec(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// run builds the run's metadata, records, scrape rows and trace events.
func (s synth) run() (rundir.RunMeta, []client.Record, []scrape.Row, []trace.Event) {
	rng := rand.New(rand.NewPCG(s.seed, s.seed^0x9e3779b97f4a7c15))
	meta := rundir.RunMeta{
		ID: "20260314T092653Z-golden", Scenario: "golden", Description: "A sweep of four rates against a synthetic engine.",
		Seed: int64(s.seed), StartedAt: synthStart, Version: "v0.0.0-test",
		Engine: rundir.EngineMeta{Kind: "sim", Dialect: "sglang", BaseURL: "http://engine.test:30000/v1", MetricsURL: synthTarget,
			Model: "meta-llama/Llama-3.1-8B-Instruct"},
		SLO:          &rundir.SLO{TTFT: sec(1), TPOT: sec(0.05)},
		LateArrivals: 2,
		Client: rundir.ClientHealth{CPUCores: 2, CPUUtilization: 0.137, SchedLatencyP99_s: 0.00042, GCCycles: 3,
			GCPolicy: "collect at a 1024 MiB heap (GOGC=off, GOMEMLIMIT)"},
	}
	if s.hostile {
		meta.Scenario, meta.ID, meta.Engine.Model, meta.Description = "golden"+hostileText, meta.ID+hostileText, hostileText, hostileText
	}

	var records []client.Record
	var phaseMeta []rundir.PhaseMeta
	var queueOf []float64 // each record's time in the engine's queue
	// The engine serves requests in arrival order at synthServiceRate
	// requests/s (scaled): past that rate, the queue and TTFT grow and the
	// throughput flattens. Each phase drains before the next one starts.
	service := cmp.Or(s.service, synthServiceRate) * s.rateScale
	nextFree, t0 := 0.0, 0.2
	for _, ph := range s.phases() {
		pm := rundir.PhaseMeta{Name: ph.name, Measured: ph.measured, Start: sec(t0), Load: ph.rate, LoadUnit: "requests/s"}
		n := int(ph.rate * ph.dur)
		end := t0 + ph.dur
		for k := 0; k < n; k++ {
			at := t0 + (float64(k)+rng.Float64())*ph.dur/float64(n)
			start := math.Max(at, nextFree)
			nextFree = start + 1/service
			r, q := s.record(rng, len(records), ph.name, at, start-at+rng.ExpFloat64()*0.002)
			records = append(records, r)
			queueOf = append(queueOf, q)
			end = math.Max(end, r.End.Seconds()+0.05)
		}
		pm.End = sec(end)
		t0 = end
		phaseMeta = append(phaseMeta, pm)
	}
	meta.Phases = phaseMeta
	rows := s.scrapes(records, queueOf, &meta)
	var events []trace.Event
	if s.traces {
		events = s.traceEvents(records, queueOf)
	}
	return meta, records, rows, events
}

// noise is a log-normal factor, its exponent capped at two deviations so
// that no request outlasts the run by much.
func noise(rng *rand.Rand, spread float64) float64 {
	return math.Exp(spread * math.Max(-2, math.Min(2, rng.NormFloat64())))
}

func (s synth) record(rng *rand.Rand, i int, phase string, at, queue float64) (client.Record, float64) {
	r := client.Record{ID: fmt.Sprintf("req-%06d", i), Index: i, Phase: phase, Intended: sec(at), Status: 200,
		TargetPromptTokens: 64 + rng.IntN(192), MaxTokens: 16 + rng.IntN(48), TokenSource: client.TokensFromUsage}
	r.Sent = r.Intended + sec(0.0001+rng.ExpFloat64()*0.0002)
	r.Wrote = r.Sent + sec(0.00005)
	if i < 16 {
		r.Connected, r.ConnectDur = r.Sent+sec(0.0002), sec(0.0002)
	} else {
		r.Reused = true
	}
	r.PromptTokens = r.TargetPromptTokens + rng.IntN(5) - 2
	r.OutputTokens = r.MaxTokens
	r.FinishReason = "length"
	prefill := 0.015 + float64(r.PromptTokens)*0.0001
	ttft := (queue + prefill + rng.ExpFloat64()*0.004) * noise(rng, s.spread)
	r.FirstByte = r.Wrote + sec(ttft-0.001)
	r.FirstToken = r.Wrote + sec(ttft)
	// Tokens arrive in chunks of roughly equal size; a gap per token of ~6 ms.
	nChunks := min(r.OutputTokens, s.chunks)
	next := r.FirstToken
	left := r.OutputTokens
	for c := 0; c < nChunks; c++ {
		tok := left / (nChunks - c)
		left -= tok
		if c > 0 {
			next += sec(float64(tok) * (0.005 + rng.ExpFloat64()*0.001) * noise(rng, s.spread))
		}
		r.Chunks = append(r.Chunks, client.Chunk{At: next, Tokens: int32(tok)})
	}
	r.End = next + sec(0.0003)
	if s.failEvery > 0 && i%s.failEvery == s.failEvery-1 {
		r.OutputTokens, r.PromptTokens, r.TokenSource, r.FinishReason = 0, 0, "", ""
		if i%(2*s.failEvery) == s.failEvery-1 {
			r.ErrorClass, r.Status, r.Error = client.ErrHTTPStatus, 503, "503 Service Unavailable: engine overloaded"
			r.FirstByte, r.FirstToken, r.Chunks, r.End = r.Wrote+sec(0.002), 0, nil, r.Wrote+sec(0.003)
		} else {
			r.ErrorClass, r.Error = client.ErrStreamBroken, "stream closed after 3 chunks without [DONE]"
			r.Chunks = r.Chunks[:min(3, len(r.Chunks))]
			r.End = r.Chunks[len(r.Chunks)-1].At + sec(0.01)
		}
		if s.hostile {
			r.Error = hostileText
		}
	}
	return r, queue
}

// scrapes samples the engine once a second and at each phase boundary (the
// boundary snapshots go into meta); one scrape in the middle fails.
func (s synth) scrapes(records []client.Record, queueOf []float64, meta *rundir.RunMeta) []scrape.Row {
	type finish struct {
		at    time.Duration
		index int
	}
	var finished []finish
	var starts, ends []time.Duration
	for i, r := range records {
		starts, ends = append(starts, r.SentOnWire()), append(ends, r.End)
		if r.OK() {
			finished = append(finished, finish{r.End, i})
		}
	}
	sort.Slice(finished, func(a, b int) bool { return finished[a].at < finished[b].at })
	slices.Sort(starts)
	slices.Sort(ends)

	var end time.Duration
	for _, ph := range meta.Phases {
		end = max(end, ph.End)
	}
	type sample struct {
		at       time.Duration
		boundary func(scrape.Row)
	}
	var times []sample
	for t := time.Duration(0); t <= end+time.Second; t += time.Second {
		times = append(times, sample{at: t})
	}
	for i := range meta.Phases {
		ph := &meta.Phases[i]
		times = append(times,
			sample{ph.Start - time.Millisecond, func(r scrape.Row) { ph.Before = &r }},
			sample{ph.End + time.Millisecond, func(r scrape.Row) { ph.After = &r }})
	}
	sort.SliceStable(times, func(a, b int) bool { return times[a].at < times[b].at })

	hist := map[scrape.Concept]*scrape.Histogram{
		scrape.TTFT:  {Bounds: ttftBounds, Cumulative: make([]float64, len(ttftBounds))},
		scrape.ITL:   {Bounds: itlBounds, Cumulative: make([]float64, len(itlBounds))},
		scrape.E2E:   {Bounds: e2eBounds, Cumulative: make([]float64, len(e2eBounds))},
		scrape.Queue: {Bounds: queueBounds, Cumulative: make([]float64, len(queueBounds))},
	}
	observe := func(c scrape.Concept, v, weight float64) {
		h := hist[c]
		for i, b := range h.Bounds {
			if v <= b {
				h.Cumulative[i] += weight
			}
		}
		h.Count += weight
		h.Sum += v * weight
	}
	counters := map[scrape.Concept]float64{}
	var rows []scrape.Row
	next, si, ei := 0, 0, 0
	var itls []time.Duration
	for k, smp := range times {
		for next < len(finished) && finished[next].at <= smp.at {
			r := &records[finished[next].index]
			ttft, _ := r.TTFT()
			observe(scrape.TTFT, ttft.Seconds(), 1)
			observe(scrape.E2E, r.E2E().Seconds(), 1)
			observe(scrape.Queue, queueOf[finished[next].index], 1)
			itls = r.ITLs(itls[:0])
			for _, d := range itls {
				observe(scrape.ITL, d.Seconds(), 1)
			}
			counters[scrape.RequestsFinished]++
			counters[scrape.PromptTokens] += float64(r.PromptTokens)
			counters[scrape.GenerationTokens] += float64(r.OutputTokens)
			next++
		}
		for si < len(starts) && starts[si] <= smp.at {
			si++
		}
		for ei < len(ends) && ends[ei] <= smp.at {
			ei++
		}
		inflight := float64(si - ei)
		running := math.Min(inflight, synthCapacity)
		snap := &scrape.Snapshot{Dialect: "sglang",
			Gauges: map[scrape.Concept]float64{
				scrape.RequestsRunning: running,
				scrape.RequestsWaiting: inflight - running,
				scrape.KVCacheUsage:    math.Round(running/synthCapacity*0.85*1000) / 1000,
			},
			Counters:   cloneCounters(counters),
			Histograms: map[scrape.Concept]scrape.Histogram{},
		}
		for c, h := range hist {
			snap.Histograms[c] = scrape.Histogram{Bounds: h.Bounds, Cumulative: slices.Clone(h.Cumulative), Count: h.Count, Sum: h.Sum}
		}
		row := scrape.Row{Target: synthTarget, Wall: synthStart.Add(smp.at), At: smp.at, Duration: 2 * time.Millisecond,
			OK: true, Bytes: 14000, Snapshot: snap, Status: 200, Format: "text"}
		if smp.boundary != nil {
			smp.boundary(row)
			continue
		}
		if k == len(times)/2 {
			row = scrape.Row{Target: synthTarget, Wall: row.Wall, At: row.At, Duration: time.Second,
				Error: "Get " + synthTarget + ": context deadline exceeded"}
			if s.hostile {
				row.Error = hostileText
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func cloneCounters(m map[scrape.Concept]float64) map[scrape.Concept]float64 {
	out := make(map[scrape.Concept]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// traceEvents writes the engine's side of each successful request, with
// wall-clock stamps at FastDeploy's millisecond resolution.
func (s synth) traceEvents(records []client.Record, queueOf []float64) []trace.Event {
	var out []trace.Event
	wall := func(d time.Duration) time.Time { return synthStart.Add(d).Truncate(time.Millisecond) }
	for i, r := range records {
		if !r.OK() {
			continue
		}
		pre := r.Wrote + sec(0.0004)
		preEnd := pre + sec(0.0011)
		infStart := preEnd + sec(queueOf[i])
		first := r.FirstToken - sec(0.0006)
		last := r.End - sec(0.0002)
		for _, ev := range []struct {
			name string
			at   time.Duration
		}{
			{trace.PreprocessingStart, pre}, {trace.PreprocessingEnd, preEnd}, {trace.InferenceStart, min(infStart, first)},
			{trace.FirstToken, first}, {trace.InferenceEnd, last},
		} {
			out = append(out, trace.Event{RequestID: r.ID, RawID: r.ID + "_0", Event: ev.name, Wall: wall(ev.at)})
		}
	}
	return out
}

// input computes the Summary the way report.Build does and keeps the raw
// values beside it.
func (s synth) input() Input {
	meta, records, rows, events := s.run()
	if s.noMetrics {
		rows, meta.Engine.MetricsURL = nil, ""
		for i := range meta.Phases {
			meta.Phases[i].Before, meta.Phases[i].After = nil, nil
		}
	}
	if s.agentic {
		withSessionsAndImages(records)
	}
	var gpuRows []scrape.Row
	if s.gpu {
		gpuRows = s.gpuScrapes(records, &meta)
	}
	sum := report.Compute(meta, slices.Clone(records), rows, events, 0)
	report.AddGPUAndCache(&sum, meta, gpuRows, records)
	return Input{Summary: sum, Records: records, Rows: rows, GPURows: gpuRows}
}

// goldenRun is the run behind the golden file: every section present.
var goldenRun = synth{seed: 42, rateScale: 1, stretch: 1, chunks: 12, failEvery: 37, traces: true, gpu: true}
