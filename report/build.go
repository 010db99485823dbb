package report

import (
	"path/filepath"
	"slices"
	"sync"
	"time"
	"unsafe"

	"gonum.org/v1/gonum/stat"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/quantile"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/report/validity"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/scrape/otlp"
	"github.com/llmbench-org/llmbench/scrape/sglangexport"
	"github.com/llmbench-org/llmbench/scrape/trace"
)

// Build reads a run directory's raw files (run.json, requests.jsonl,
// scrapes.jsonl) and computes its Summary. It only reads: the same directory
// always gives the same Summary, so `llmbench report DIR` can rebuild it.
func Build(dir string) (Summary, error) {
	l, err := Load(dir)
	if err != nil {
		return Summary{}, err
	}
	return l.Summary(), nil
}

// Loaded is a run directory read once: what the summary, the HTML report
// and the gates are all computed from. requests.jsonl is read in one
// streaming pass (ReadRequests): the records are kept without their chunks.
type Loaded struct {
	Meta     rundir.RunMeta
	Requests *rundir.Requests
	Rows     []scrape.Row // redacted (rundir.RedactRow)
	Traces   []trace.Event
	Spans    []otlp.Span // spans.jsonl (timelinesummary.go)
	// Export is SGLang's per-request export (sglang-export/, timelinesummary.go).
	Export sglangexport.Log
	// PartialScrapes counts torn lines of scrapes.jsonl.
	PartialScrapes int
	// GPURows are the GPU telemetry's scrapes (gpu.jsonl), apart from the engine's.
	GPURows []scrape.Row
}

// Load reads a run directory's raw files, requests.jsonl once.
func Load(dir string) (*Loaded, error) {
	l := &Loaded{}
	var err error
	if l.Meta, err = rundir.ReadMeta(dir); err != nil {
		return nil, err
	}
	// The scrapes first: they say which stretches of the run clock the
	// reconciliation compares, and the records are digested for them.
	if l.Rows, l.PartialScrapes, err = rundir.ReadRows(dir); err != nil {
		return nil, err
	}
	if l.GPURows, _, err = rundir.ReadGPURows(dir); err != nil {
		return nil, err
	}
	if l.Traces, err = rundir.ReadTraceLog(dir); err != nil {
		return nil, err
	}
	if l.Requests, err = rundir.ReadRequests(filepath.Join(dir, rundir.RequestsFile), reconcileSpans(l.Meta, l.Rows)); err != nil {
		return nil, err
	}
	if l.Spans, _, err = rundir.ReadSpans(dir); err != nil {
		return nil, err
	}
	if l.Export, err = rundir.ReadSGLangExport(dir); err != nil {
		return nil, err
	}
	return l, nil
}

// Summary computes the run's Summary.
func (l *Loaded) Summary() Summary {
	s := summarize(l.Meta, l.Requests, l.Rows, l.Traces, l.Requests.Partial+l.PartialScrapes)
	AddGPUAndCache(&s, l.Meta, l.GPURows, l.Requests.Records)
	s.Timeline = timelineOf(l.Meta, l.Requests.Records, l.Spans, l.Export)
	if f, ok := timelineFinding(s.Timeline); ok {
		s.Findings = append(s.Findings, f)
	}
	if l.Meta.Ended.IsZero() {
		// run.json is rewritten when the run ends; without its end the run
		// was stopped from outside (kill -9, a crash, a lost machine)
		// before it could say so, and its phases may be cut short.
		s.Health.Unfinished = true
		s.Health.judged(append(s.Health.States, validity.UnfinishedState(s.Health.Records)))
	}
	return s
}

// reconcileWindows are the run's phases as the reconciliation sees them.
func reconcileWindows(meta rundir.RunMeta) []reconcile.Window {
	var out []reconcile.Window
	for _, ph := range meta.Phases {
		out = append(out, reconcile.Window{Name: ph.Name, Measured: ph.Measured, Start: ph.Start, End: ph.End,
			Before: ph.Before, After: ph.After, Settle: ph.Settle})
	}
	return out
}

// reconcileSpans are the stretches of the run clock whose records the
// reconciliation compares with the engine.
func reconcileSpans(meta rundir.RunMeta, rows []scrape.Row) []chunkdigest.Span {
	return reconcile.Spans(reconcileWindows(meta))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Compute builds the Summary from values already in memory: the run's
// metadata, every client record, every scrape row, and the engine's trace
// events (nil when it has none).
//
// Records whose ID an earlier one has are dropped and counted
// (health.duplicate_records); every string that reaches the Summary is
// redacted (Redact); a phase cut short before its end was written is
// closed at its last record, so no duration is negative.
func Compute(meta rundir.RunMeta, records []client.Record, rows []scrape.Row, traces []trace.Event, partialLines int) Summary {
	records, rows, duplicates := rundir.Clean(records, rows)
	req := rundir.DigestRecords(records, reconcileSpans(meta, rows))
	req.Duplicates = duplicates
	return summarize(meta, req, rows, traces, partialLines)
}

// request is a record with what it kept of its chunks.
type request struct {
	*client.Record
	chunks chunkdigest.Request
}

// summarize computes the Summary from records in plan order (duplicates
// dropped, redacted) with their digests, and redacted rows.
func summarize(meta rundir.RunMeta, req *rundir.Requests, rows []scrape.Row, traces []trace.Event, partialLines int) Summary {
	rundir.RedactMeta(&meta)
	records := req.Records
	meta.Phases = closePhases(meta.Phases, records)

	s := Summary{
		Schema: SummarySchema,
		Run: RunInfo{ID: meta.ID, Scenario: meta.Scenario, Description: meta.Description, Seed: meta.Seed, StartedAt: meta.StartedAt,
			Version: meta.Version, Stopped: meta.Stopped},
		Engine:   meta.Engine,
		Findings: []Finding{},
		Load:     SentLoad(meta, records),
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

	// Sized first: a large run's slices grown by doubling are garbage the
	// collector marks the live records again to free.
	// Records come in runs of one phase: the phase of each run is looked
	// up once (a million map lookups by string were most of this loop).
	perPhase := map[string]int{}
	for i := 0; i < len(records); {
		j := i + 1
		for j < len(records) && records[j].Phase == records[i].Phase {
			j++
		}
		perPhase[records[i].Phase] += j - i
		i = j
	}
	mrecs := make([]request, 0, len(records))
	byPhase := make(map[string][]request, len(perPhase))
	for phase, n := range perPhase {
		byPhase[phase] = make([]request, 0, n)
	}
	for i := 0; i < len(records); {
		phase := records[i].Phase
		measured, rs := inMeasured(phase), byPhase[phase]
		for ; i < len(records) && records[i].Phase == phase; i++ {
			r := request{&records[i], req.Chunks[i]}
			if measured {
				mrecs = append(mrecs, r)
			}
			rs = append(rs, r)
		}
		byPhase[phase] = rs
	}
	measuredDigest := req.Digest.Of(inMeasured)
	ps := meta.Percentiles
	if len(ps) == 0 {
		ps = rundir.DefaultPercentiles
	}
	s.Percentiles = ps
	// The run's client side and each phase's read the records only: they
	// are computed at once, one goroutine each (sorting a large run's
	// latencies is most of a summary's time).
	var wg sync.WaitGroup
	wg.Go(func() {
		s.Client = clientSide(mrecs, measuredDigest, measuredDur, ps)
		s.Client.Tokens.PromptCalibration = meta.PromptCalibration
		if ct := s.Client.Tokens.ContextTruncated; ct != nil {
			ct.EngineContext = meta.Engine.ContextTokens
		}
		s.Client.Goodput = goodputOf(mrecs, measuredDur, meta.SLO)
	})
	s.Run.Duration = measuredDur.Seconds()

	s.Phases = make([]PhaseResult, len(meta.Phases))
	for i, ph := range meta.Phases {
		prec := byPhase[ph.Name]
		pd := req.Digest.Of(func(name string) bool { return name == ph.Name })
		wg.Go(func() {
			pc := clientSide(prec, pd, ph.End-ph.Start, ps)
			pc.Goodput = goodputOf(prec, ph.End-ph.Start, meta.SLO)
			s.Phases[i] = PhaseResult{
				Name: ph.Name, Measured: ph.Measured, Start: ph.Start.Seconds(),
				Duration: (ph.End - ph.Start).Seconds(), Load: ph.Load, LoadUnit: ph.LoadUnit, Planned: ph.Planned,
				Client: pc,
				Server: serverSide(meta, []rundir.PhaseMeta{ph}, rows, serverSamples([]rundir.PhaseMeta{ph}, prec, pd)),
			}
			s.Phases[i].SLOVerdict = sloVerdictOf(meta.SLO, ph.Measured, prec)
		})
	}
	// Health, the engine's view and the reconciliation read the records
	// and rows only too: computed beside them.
	wg.Go(func() {
		s.Health = health(meta, mrecs, rows, partialLines, req.Duplicates)
		s.Health.Records = len(records)
	})
	var server *ServerSide
	var findings []Finding
	wg.Go(func() {
		server = serverSide(meta, measuredPhases(meta), rows, serverSamples(measuredPhases(meta), mrecs, measuredDigest))
		// An engine whose dialect was left to detection is reconciled in
		// the dialect its scrapes were recognised as.
		dialect := meta.Engine.Dialect
		if dialect == "" && server != nil {
			dialect = server.Dialect
		}
		in := reconcile.Input{Records: records, Chunks: req.Chunks, Digest: req.Digest, Rows: rows, Dialect: dialect, Traces: traces,
			Origin: meta.StartedAt, Windows: reconcileWindows(meta)}
		findings = reconcile.Reconcile(in)
	})
	wg.Wait()
	if len(s.Phases) == 0 {
		s.Phases = nil // as before: no phases, no list
	}
	s.Outages = outagesOf(records, mrecs, meta.Phases, measuredDur, ps)
	s.Sessions = sessionsOf(mrecs)
	s.Sweep = sweepOf(s.Phases)
	s.Search = searchOf(meta, byPhase, s.Phases)
	s.Server = server
	if s.Engine.Dialect == "" && server != nil {
		s.Engine.Dialect = server.Dialect
	}
	if len(findings) > 0 {
		s.Findings = findings
	}
	if f, ok := violationsFinding(s.Health); ok {
		s.Findings = append(s.Findings, f)
	}
	s.Health.judged(validity.Judge(validityInput(meta, &s, mrecs, rows, partialLines, req.Duplicates)))
	if len(traces) > 0 {
		w := reconcile.Waterfall(plain(mrecs), traces, meta.StartedAt)
		s.Waterfall = &w
	}
	redactSummary(&s)
	return s
}

// plain copies the records of rs.
func plain(rs []request) []client.Record {
	out := make([]client.Record, len(rs))
	for i, r := range rs {
		out[i] = *r.Record
	}
	return out
}

// closePhases returns phases with every phase that has no end yet (a run
// stopped mid-phase: End is zero or before Start) closed at the end of its
// last record, or at its start when it has none.
func closePhases(phases []rundir.PhaseMeta, records []client.Record) []rundir.PhaseMeta {
	open := false
	for _, ph := range phases {
		if ph.End < ph.Start {
			open = true
		}
	}
	if !open {
		return phases
	}
	phases = slices.Clone(phases)
	for i := range phases {
		ph := &phases[i]
		if ph.End >= ph.Start {
			continue
		}
		ph.End = ph.Start
		for _, r := range records {
			if r.Phase == ph.Name {
				ph.End = max(ph.End, r.End)
			}
		}
	}
	return phases
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

// serverSamples are samplesOf, gathered only when some phase has the
// engine's snapshots on both sides (what serverSide compares them with;
// without, it has nothing to say and the samples would be garbage).
func serverSamples(phases []rundir.PhaseMeta, records []request, d *chunkdigest.Phase) clientSamples {
	for _, ph := range phases {
		if ph.Before != nil && ph.After != nil && ph.Before.OK && ph.After.OK &&
			ph.Before.Snapshot != nil && ph.After.Snapshot != nil {
			return samplesOf(records, d)
		}
	}
	return nil
}

// samplesOf gathers them from the successful records; ITL from the
// digest's sketch (chunkdigest.Sketch.Representative).
func samplesOf(records []request, d *chunkdigest.Phase) clientSamples {
	out := clientSamples{}
	for _, c := range []scrape.Concept{scrape.TTFT, scrape.TPOT, scrape.E2E} {
		out[c] = make([]float64, 0, len(records))
	}
	for _, r := range records {
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
	}
	if xs := d.ITL.Representative(RepresentativeITLs); len(xs) > 0 {
		out[scrape.ITL] = xs
	}
	return out
}

// RepresentativeITLs is how many values stand for the ITL sketch where a
// list of samples is compared with an engine's histogram: the CDF they draw
// is within 1/RepresentativeITLs of the sketch's at every point.
const RepresentativeITLs = 100_000

func clientSide(records []request, digest *chunkdigest.Phase, dur time.Duration, ps []float64) ClientSide {
	c := ClientSide{Requests: RequestCounts{Errors: map[string]int{}}}
	bySource := map[string]int{}
	perChunk := map[string]int{}
	// Sized once (see summarize): most requests give a TTFT, a TPOT and an E2E.
	ttft, tpot, e2e := make([]time.Duration, 0, len(records)), make([]time.Duration, 0, len(records)), make([]time.Duration, 0, len(records))
	ttfc := make([]time.Duration, 0, len(records))
	var lengths lengthTally
	prompt := promptErrors{tokens: make([]float64, 0, len(records)), fraction: make([]float64, 0, len(records))}
	var timings timingSamples
	var images imageTally
	streamedOutput := 0
	for _, r := range records {
		c.Requests.Sent++
		if r.ErrorClass == client.ErrCanceled {
			// Cancelled by the run's abort (a second Ctrl-C): neither a
			// success nor a failure of the engine.
			c.Requests.Canceled++
			continue
		}
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
		c.Tokens.Reasoning += r.ReasoningTokens
		bySource[string(r.TokenSource)]++
		if !r.NoStream {
			c.Tokens.Chunks += int(r.chunks.Chunks)
			streamedOutput += r.OutputTokens
		}
		if r.chunks.Chunks > 0 {
			src := string(r.TokensPerChunkSource)
			if src == "" {
				src = "unrecorded"
			}
			perChunk[src]++
		}
		lengths.add(r.Record)
		prompt.add(r.Record)
		images.add(r.Record)
		timings.add(r.Record)
		d, hasTTFT := r.TTFT()
		if hasTTFT {
			ttft = append(ttft, d)
		}
		if d, ok := r.TTFC(); ok {
			ttfc = append(ttfc, d)
			if hasTTFT && r.FirstContent != r.FirstToken {
				c.FirstTokenNotContent++
			}
		}
		if d, ok := r.TPOT(); ok {
			tpot = append(tpot, d)
		}
		e2e = append(e2e, r.E2E())
		for latency, why := range unmeasured(r.Record, int(r.chunks.ITLs)) {
			if why == "" {
				continue
			}
			if c.Unmeasured == nil {
				c.Unmeasured = map[string]map[string]int{}
			}
			if c.Unmeasured[latency] == nil {
				c.Unmeasured[latency] = map[string]int{}
			}
			c.Unmeasured[latency][why]++
		}
	}
	c.Requests.FailedCI = fractionCI(c.Requests.Failed, c.Requests.Sent-c.Requests.Canceled)
	c.Tokens.Source, c.Tokens.BySource = sourceOf(bySource, "none")
	c.Tokens.PerChunkSource, c.Tokens.PerChunkBySource = sourceOf(perChunk, "")
	if c.Tokens.Chunks > 0 && streamedOutput > 0 {
		c.Tokens.ChunksPerToken = float64(c.Tokens.Chunks) / float64(streamedOutput)
	}
	lengths.into(&c.Tokens)
	c.Tokens.PromptError = prompt.summary()
	c.Tokens.Images = images.summary()
	c.ServerTimings = timings.summary()
	if dur > 0 {
		sec := dur.Seconds()
		c.Throughput = Throughput{
			RequestsPerSec:     float64(c.Requests.OK) / sec,
			OutputTokensPerSec: float64(c.Tokens.Output) / sec,
			TotalTokensPerSec:  float64(c.Tokens.Output+c.Tokens.Prompt) / sec,
		}
	}
	c.Latency = Latencies{TTFT: durationDist(ttft, ps), TTFC: durationDist(ttfc, ps), ITL: sketchDist(&digest.ITL, ps), TPOT: durationDist(tpot, ps), E2E: durationDist(e2e, ps)}
	c.Throughput.PeakOutputTokensPerSec, c.PeakConcurrency = peaks(records, &digest.Arrivals)
	c.Endpoints = endpointSides(records, dur, ps) // endpoints.go
	return c
}

// sourceOf names where counts came from: the one source, or "mixed" with
// the counts by source; none when there is no source at all.
func sourceOf(by map[string]int, none string) (string, map[string]int) {
	switch len(by) {
	case 0:
		return none, nil
	case 1:
		for k := range by {
			return k, nil
		}
	}
	return "mixed", by
}

// notStreamed is why a stream:false request has no latency but E2E.
var notStreamed = map[string]string{"ttft": "not streamed", "ttfc": "not streamed", "itl": "not streamed", "tpot": "not streamed"}

// unmeasured says, per latency, why the successful request r has no sample
// of it ("" when it has one); itls is how many ITL samples it gave.
func unmeasured(r *client.Record, itls int) map[string]string {
	if r.NoStream {
		return notStreamed
	}
	if r.Pooling() {
		return poolingUnmeasured // endpoints.go
	}
	var out map[string]string
	set := func(latency, why string) {
		if out == nil {
			out = map[string]string{}
		}
		out[latency] = why
	}
	_, hasTTFT := r.TTFT()
	if !hasTTFT {
		set("ttft", "no output chunk")
	}
	if _, ok := r.TTFC(); !ok {
		if hasTTFT {
			set("ttfc", "no content chunk (reasoning or tool calls only)")
		} else {
			set("ttfc", "no output chunk")
		}
	}
	if itls == 0 {
		set("itl", "fewer than two chunks")
	}
	if _, ok := r.TPOT(); !ok {
		if r.OutputTokens < 2 {
			set("tpot", "fewer than two output tokens")
		} else {
			set("tpot", "no output chunk")
		}
	}
	return out
}

// promptErrors gathers, per successful request with both counts, the
// engine's prompt tokens minus the plan's target.
type promptErrors struct {
	tokens, fraction []float64
}

func (p *promptErrors) add(r *client.Record) {
	if r.PromptTokens <= 0 || r.TargetPromptTokens <= 0 || r.Images > 0 { // images: imageTally
		return
	}
	e := float64(r.PromptTokens - r.TargetPromptTokens)
	p.tokens = append(p.tokens, e)
	p.fraction = append(p.fraction, e/float64(r.TargetPromptTokens))
}

func (p *promptErrors) summary() *PromptError {
	if len(p.tokens) == 0 {
		return nil
	}
	t, f := distOf(p.tokens), distOf(p.fraction)
	return &PromptError{Requests: t.N, Mean: t.Mean, P50: t.P50, P99: t.P99, Min: p.tokens[0], Max: t.Max,
		FractionMean: f.Mean, FractionP50: f.P50, FractionP99: f.P99}
}

// timingSamples gathers llama.cpp's per-request timings beside the
// client's measurements of the same requests.
type timingSamples struct {
	n                                                int
	prompt, ttftMinusPrompt, predicted, clientDecode []float64
}

func (t *timingSamples) add(r *client.Record) {
	tm := r.Timings
	if tm == nil {
		return
	}
	t.n++
	prompt := tm.PromptMS / 1e3
	t.prompt = append(t.prompt, prompt)
	if d, ok := r.TTFT(); ok {
		t.ttftMinusPrompt = append(t.ttftMinusPrompt, d.Seconds()-prompt)
	}
	switch {
	case tm.PredictedPerTokenMS > 0:
		t.predicted = append(t.predicted, tm.PredictedPerTokenMS/1e3)
	case tm.PredictedN > 0:
		t.predicted = append(t.predicted, tm.PredictedMS/1e3/float64(tm.PredictedN))
	}
	if d, ok := r.TPOT(); ok {
		t.clientDecode = append(t.clientDecode, d.Seconds())
	}
}

func (t *timingSamples) summary() *ServerTimings {
	if t.n == 0 {
		return nil
	}
	return &ServerTimings{Requests: t.n, Prompt: distOf(t.prompt), TTFTMinusPrompt: distOf(t.ttftMinusPrompt),
		PredictedPerToken: distOf(t.predicted), ClientPerToken: distOf(t.clientDecode)}
}

// distOf sorts xs in place and summarises it.
func distOf(xs []float64) Dist {
	sortFloats(xs)
	return distSorted(xs)
}

// distSorted summarises xs, sorted, with the intervals of its mean and of
// its fixed quantiles.
func distSorted(xs []float64) Dist { return distSortedAt(xs, nil) }

// distSortedAt is distSorted with the percentiles ps (in percent) in
// Quantiles too, when ps is not nil.
func distSortedAt(xs []float64, ps []float64) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	q := func(p float64) float64 { return quantile.OfSorted(p, xs) }
	mean, std := stat.MeanStdDev(xs, nil)
	if len(xs) < 2 {
		std = 0 // one sample has no spread (MeanStdDev says NaN)
	}
	d := Dist{N: len(xs), Mean: mean, StdDev: std, P50: q(0.5), P90: q(0.9), P95: q(0.95), P99: q(0.99), Max: xs[len(xs)-1]}
	if ps != nil {
		d.Quantiles = make(map[string]float64, len(ps))
		for _, p := range ps {
			d.Quantiles[rundir.PercentileName(p)] = q(p / 100)
		}
	}
	d.CI = sampleCI(xs, mean, std, ps)
	return d
}

// distWith is distOf with the percentiles ps (in percent) in Quantiles.
func distWith(xs []float64, ps []float64) Dist {
	sortFloats(xs)
	return distSortedWith(xs, ps)
}

// durationDist is distWith of the durations ds in seconds.
func durationDist(ds []time.Duration, ps []float64) Dist {
	return distSortedWith(sortedSeconds(ds), ps)
}

// durationDistOf is distOf of the durations ds in seconds.
func durationDistOf(ds []time.Duration) Dist { return distSorted(sortedSeconds(ds)) }

// sortedSeconds sorts ds as integers (fewer bytes to sort by than their
// seconds') and turns them into seconds in place (time.Duration.Seconds
// keeps their order).
func sortedSeconds(ds []time.Duration) []float64 {
	sortDurations(ds)
	xs := unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(ds))), len(ds))
	for i, d := range ds {
		xs[i] = d.Seconds()
	}
	return xs
}

func distSortedWith(xs []float64, ps []float64) Dist {
	if ps == nil {
		ps = []float64{} // Quantiles present (empty), as before
	}
	return distSortedAt(xs, ps)
}

// sketchDist summarises a sketch as distWith summarises samples: count,
// mean, standard deviation and max exact, quantiles within
// chunkdigest.RelativeError, and their intervals read from the sketch
// (sketchCI).
func sketchDist(sk *chunkdigest.Sketch, ps []float64) Dist {
	if sk.N() == 0 {
		return Dist{}
	}
	d := Dist{N: sk.N(), Mean: sk.Mean(), StdDev: sk.StdDev(), P50: sk.Quantile(0.5), P90: sk.Quantile(0.9),
		P95: sk.Quantile(0.95), P99: sk.Quantile(0.99), Max: sk.Max().Seconds()}
	d.Quantiles = make(map[string]float64, len(ps))
	for _, p := range ps {
		d.Quantiles[rundir.PercentileName(p)] = sk.Quantile(p / 100)
	}
	d.CI = sketchCI(sk, ps)
	return d
}

// peaks are the most output tokens streamed in one second of the run clock
// (from the token arrivals), and the most requests in flight at once, over
// the records.
func peaks(records []request, arrivals *chunkdigest.Bins) (tokensPerS float64, concurrency int) {
	perSecond := map[int64]float64{}
	arrivals.Each(func(at time.Duration, tokens int64) {
		sec := int64(at / time.Second)
		if at < 0 && at%time.Second != 0 {
			sec-- // the bins are floored; so is the second
		}
		perSecond[sec] += float64(tokens)
	})
	for _, v := range perSecond {
		tokensPerS = max(tokensPerS, v)
	}
	// The most in flight: the starts and the ends in time order, an end
	// before a start at the same instant.
	starts, ends := make([]time.Duration, 0, len(records)), make([]time.Duration, 0, len(records))
	for _, r := range records {
		if r.Sent > 0 && r.End >= r.Sent {
			starts, ends = append(starts, r.SentOnWire()), append(ends, r.End)
		}
	}
	sortDurations(starts)
	sortDurations(ends)
	cur, j := 0, 0
	for _, at := range starts {
		for ; j < len(ends) && ends[j] <= at; j++ {
			cur--
		}
		cur++
		concurrency = max(concurrency, cur)
	}
	return tokensPerS, concurrency
}

func health(meta rundir.RunMeta, records []request, rows []scrape.Row, partialLines, duplicates int) Health {
	h := Health{
		DroppedArrivals: meta.DroppedArrivals, LateArrivals: meta.LateArrivals,
		PartialLines: partialLines, DuplicateRecords: duplicates, Client: meta.Client,
	}
	lag, sendDelay := make([]time.Duration, 0, len(records)), make([]time.Duration, 0, len(records))
	var connect []time.Duration
	for _, r := range records {
		sendDelay = append(sendDelay, r.SendDelay())
		if r.Scheduled() { // closed-loop requests have no schedule: they go when a user is free
			lag = append(lag, max(0, r.ScheduleLag()))
		}
		if r.ConnectDur > 0 {
			connect = append(connect, r.ConnectDur)
		}
		h.Retries += r.Retries
		if r.NoStream {
			h.NotStreamed++
		}
		if r.NoDone && r.OK() {
			h.StreamsWithoutDone++
		}
		h.ProtocolViolations = countViolations(h.ProtocolViolations, r.Record)
		h.Wire = countWire(h.Wire, r.Record)
	}
	h.ScheduleLag, h.Connect, h.SendDelay = durationDistOf(lag), durationDistOf(connect), durationDistOf(sendDelay)
	for _, row := range rows {
		if row.OK {
			h.ScrapeOK++
		} else {
			h.ScrapeFailures++
		}
	}
	return h
}
