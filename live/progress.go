// Package live is the live view's model (docs/decisions/0019): the
// trailing window a run folds each finished request and scrape into
// (Window, a sink of the run), the snapshot views read from it (Progress),
// the live reconciliation, and the plain progress lines. The TUI and the
// plain lines import it, not report.
package live

import (
	"fmt"
	"slices"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/outages"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// Progress is what the live view shows: totals so far, rates and latency
// quantiles over a trailing window, and the engine's latest gauges. It is a
// plain value: the TUI and the plain-line printer only render it.
type Progress struct {
	Phase    string // the phase being driven ("" before the first)
	Elapsed  time.Duration
	Window   time.Duration // the trailing window the rates and quantiles cover
	Sent     int
	Finished int
	InFlight int
	OK       int
	Failed   int // not counting Canceled
	Canceled int // cancelled by the run's abort: not failures
	Errors   map[client.ErrorClass]int

	RequestsPerSec     float64 // over the window
	OutputTokensPerSec float64 // over the window
	// GoodputPerSec is the rate of requests within the scenario's SLO over
	// the window, and GoodFraction their share of the window's finished
	// requests that could be measured against it (Unmeasured of them could
	// not: no TTFT without a stream); HasGoodput is false without an SLO.
	GoodputPerSec float64
	GoodFraction  float64
	Unmeasured    int
	HasGoodput    bool
	// Percentiles are the scenario's report.percentiles, the ones the
	// final report shows: every Quantiles below holds one value each.
	Percentiles []float64
	TTFT        Quantiles
	// TTFC is the time to first content over the window; TTFCDiffers is
	// true when some request's first output chunk in the window was
	// reasoning or a tool call, so TTFC is not TTFT.
	TTFC        Quantiles
	TTFCDiffers bool
	// ITLMean is not the summary's ITL: the window's quantiles of each
	// request's mean ITL (client.Record.MeanITL), shown as "ITL per-req
	// mean"; the summary's ITL is per token (client.Record.ITLs).
	ITLMean Quantiles
	E2E     Quantiles
	// NotStreamed counts the requests sent with stream:false so far (no
	// TTFT, ITL or chunk); StreamsWithoutDone the successful streams that
	// ended without [DONE].
	NotStreamed        int
	StreamsWithoutDone int
	ScheduleLagMax     time.Duration // over the window
	// Pooling is the window's pooling requests (embeddings, rerank): their
	// inputs and input tokens per second (pooling.go).
	Pooling PoolingLive
	// Sessions and Images are the window's per-session prefix-cache hit
	// rates (an agentic replay) and its images (sessions.go).
	Sessions SessionsLive
	Images   ImagesLive

	Server ServerLive
	// GPU is the GPU telemetry's latest look and a token's energy over the
	// window (gpu.go).
	GPU GPULive
	// Engine is the engine's own latency over the window, from its
	// histograms, for the live table beside the client's (engine.go).
	Engine EngineLatencies
	// Client is what the client measured of itself over the last second;
	// its Delay is set only when two seconds in a row agreed on it.
	Client         ClientLive
	Findings       []reconcile.Finding // the live reconciliation over the window (empty before SetDialect)
	ScrapeOK       int
	ScrapeFailures int
	LastScrapeErr  string

	// Outage is the outage going on now (the engine refused or reset the
	// last requests: package outages), Outages how many have ended so far.
	Outage  OutageLive
	Outages int
	// Silent counts the requests in flight that have received no byte at
	// all (not even headers), SilentFor how long the oldest has waited
	// (Window.SetSilent): what a draining run waits on.
	Silent    int
	SilentFor time.Duration
}

// OutageLive is the outage open now, if Open: since when (run clock) and
// the requests that failed to reach the engine in it so far.
type OutageLive struct {
	Open     bool
	Since    time.Duration
	Attempts int
}

// Line words the outage for the live views ("" when none is open).
func (o OutageLive) Line(now time.Duration) string {
	if !o.Open {
		return ""
	}
	return fmt.Sprintf("engine unreachable for %.1fs (%d failed %s; users back off)", max(0, now-o.Since).Seconds(), o.Attempts, plural(o.Attempts, "attempt", "attempts"))
}

// SilentLine words what a run waits on when requests have received no
// byte for a second or more ("" otherwise): every progress line says it, so
// a drain held by a server that never answers is never a silent wait.
func (p Progress) SilentLine() string {
	if p.Silent == 0 || p.SilentFor < time.Second {
		return ""
	}
	return fmt.Sprintf("waiting on %d %s with no byte received for %.0fs", p.Silent, plural(p.Silent, "request", "requests"), p.SilentFor.Seconds())
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Quantiles of a latency over the live window: Values[i] is the
// percentile Progress.Percentiles[i] (nil without samples); N is the sample
// count.
type Quantiles struct {
	N      int
	Mean   time.Duration // 0 without samples
	Values []time.Duration
}

// ServerLive is the latest successful scrape's gauges; Has* is false when the
// engine does not expose the concept (absent, never zero).
type ServerLive struct {
	At                  time.Duration
	Running, Waiting    float64
	KVUsage             float64
	HasRunning, HasWait bool
	HasKV               bool
}

// window keeps bounded state: per-finish events of the trailing window,
// plus running totals. Memory stays bounded by the window, not the run.
type window struct {
	span time.Duration
	slo  *rundir.SLO // nil: no goodput
	// percentiles the window's quantiles are read at (rundir.DefaultPercentiles
	// unless SetPercentiles said otherwise)
	percentiles []float64
	events      []liveEvent // finished requests within span, in arrival order

	finished, ok, failed, canceled int
	errors                         map[client.ErrorClass]int
	notStreamed, noDone            int

	server                 ServerLive
	scrapeOK, scrapeFailed int
	lastScrapeErr          string
	outages                outages.Tracker
	engine                 []engineHist // the window's successful scrapes, latency histograms only
	gpu                    GPULive      // the latest GPU telemetry scrape (gpu.go)
	gpuSamples             []gpuSample  // the window's GPU scrapes, for its energy
}

type liveEvent struct {
	at      time.Duration
	ok      bool
	tokens  int
	ttft    time.Duration // -1 when none
	ttfc    time.Duration // -1 when none
	reasons bool          // the first output chunk was not content
	e2e     time.Duration
	lag     time.Duration
	hasLag  bool          // open loop: the request had an intended time
	itlMean time.Duration // the request's mean ITL (-1 when fewer than two chunks)
	good    bool          // within the rundir.SLO
	unmeas  bool          // could not be measured against the rundir.SLO
	pooled  pooledEvent   // a pooling request's inputs (pooling.go)
	agentic agenticEvent  // its session's and images' counts (sessions.go)
}

func newWindow(span time.Duration) window {
	return window{span: span, errors: map[client.ErrorClass]int{}, percentiles: rundir.DefaultPercentiles}
}

func (w *window) addRecord(r *client.Record, now time.Duration) {
	w.finished++
	w.outages.Add(r)
	switch {
	case r.OK():
		w.ok++
	case r.ErrorClass == client.ErrCanceled:
		w.canceled++
	default:
		w.failed++
		w.errors[r.ErrorClass]++
	}
	if r.NoStream {
		w.notStreamed++
	}
	if r.NoDone && r.OK() {
		w.noDone++
	}
	ev := liveEvent{at: now, ok: r.OK(), tokens: r.OutputTokens, ttft: -1, ttfc: -1, itlMean: -1, e2e: r.E2E(), lag: r.ScheduleLag(), hasLag: r.Scheduled()}
	if d, ok := r.TTFT(); ok {
		ev.ttft = d
	}
	if d, ok := r.TTFC(); ok {
		ev.ttfc = d
		ev.reasons = r.FirstToken > 0 && r.FirstContent != r.FirstToken
	}
	if d, ok := r.MeanITL(); ok {
		ev.itlMean = d
	}
	if w.slo != nil {
		ev.good, ev.unmeas = w.slo.Judge(r)
	}
	ev.pooled = pooledOf(r)
	ev.agentic = agenticOf(r)
	w.events = append(w.events, ev)
	w.trim(now)
}

func (w *window) addRow(row *scrape.Row) {
	if !row.OK || row.Snapshot == nil {
		w.scrapeFailed++
		w.lastScrapeErr = row.Error
		return
	}
	w.scrapeOK++
	s := ServerLive{At: row.At}
	g := row.Snapshot.Gauges
	s.Running, s.HasRunning = g[scrape.RequestsRunning]
	s.Waiting, s.HasWait = g[scrape.RequestsWaiting]
	s.KVUsage, s.HasKV = g[scrape.KVCacheUsage]
	w.server = s
	w.addEngineRow(row)
}

// trim drops events older than the window from its front. Re-slicing costs
// nothing per record (copying the window down whenever one event expired
// cost 728 µs per record with 25,000 events held: decision 0602); append
// moves the window to a new array when the old one fills, so the memory
// held stays within about twice the window.
func (w *window) trim(now time.Duration) {
	cut := 0
	for cut < len(w.events) && now-w.events[cut].at > w.span {
		cut++
	}
	if cut > 0 {
		w.events = w.events[cut:]
	}
}

func (w *window) progress(now time.Duration) Progress {
	w.trim(now)
	p := Progress{
		Window: w.span, Finished: w.finished, OK: w.ok, Failed: w.failed, Canceled: w.canceled,
		Errors: make(map[client.ErrorClass]int, len(w.errors)),
		Server: w.server, ScrapeOK: w.scrapeOK, ScrapeFailures: w.scrapeFailed, LastScrapeErr: w.lastScrapeErr,
		NotStreamed: w.notStreamed, StreamsWithoutDone: w.noDone, Percentiles: w.percentiles,
	}
	for k, v := range w.errors {
		p.Errors[k] = v
	}
	if o, open := w.outages.Current(); open {
		p.Outage = OutageLive{Open: true, Since: o.Start, Attempts: o.Attempts}
	}
	p.Outages = w.outages.Closed()
	span := w.span
	if now < span {
		span = now
	}
	var ttft, ttfc, itl, e2e []time.Duration
	tokens, good := 0, 0
	for _, ev := range w.events {
		if ev.lag > p.ScheduleLagMax && ev.hasLag {
			p.ScheduleLagMax = ev.lag
		}
		if ev.good {
			good++
		}
		if ev.unmeas {
			p.Unmeasured++
		}
		if !ev.ok {
			continue
		}
		tokens += ev.tokens
		e2e = append(e2e, ev.e2e)
		if ev.ttft >= 0 {
			ttft = append(ttft, ev.ttft)
		}
		if ev.ttfc >= 0 {
			ttfc = append(ttfc, ev.ttfc)
		}
		p.TTFCDiffers = p.TTFCDiffers || ev.reasons
		if ev.itlMean >= 0 {
			itl = append(itl, ev.itlMean)
		}
	}
	if span > 0 {
		p.RequestsPerSec = float64(len(e2e)) / span.Seconds()
		p.OutputTokensPerSec = float64(tokens) / span.Seconds()
	}
	if p.HasGoodput = w.slo != nil; p.HasGoodput {
		if span > 0 {
			p.GoodputPerSec = float64(good) / span.Seconds()
		}
		if n := len(w.events) - p.Unmeasured; n > 0 {
			p.GoodFraction = float64(good) / float64(n)
		}
	}
	p.Pooling = pooledRates(w.events, span) // pooling.go

	p.Sessions, p.Images = agenticRates(w.events, span) // sessions.go
	p.Engine = w.engineLatencies(now, w.percentiles)
	p.GPU = w.gpuLive(now, p.OutputTokensPerSec)
	p.TTFT, p.TTFC, p.ITLMean, p.E2E = quantilesOf(ttft, w.percentiles), quantilesOf(ttfc, w.percentiles), quantilesOf(itl, w.percentiles), quantilesOf(e2e, w.percentiles)
	return p
}

// quantilesOf sorts xs in place and reads nearest-rank quantiles: the live view
// wants a cheap, honest "a value that happened", not interpolation.
func quantilesOf(xs []time.Duration, percentiles []float64) Quantiles {
	if len(xs) == 0 {
		return Quantiles{}
	}
	slices.Sort(xs)
	q := Quantiles{N: len(xs), Values: make([]time.Duration, len(percentiles))}
	var sum float64 // float: a window of long E2Es could overflow a Duration sum
	for _, x := range xs {
		sum += float64(x)
	}
	q.Mean = time.Duration(sum / float64(len(xs)))
	for k, p := range percentiles {
		i := int(p/100*float64(len(xs))+0.5) - 1
		q.Values[k] = xs[max(0, min(i, len(xs)-1))]
	}
	return q
}

// ClientLive is the client's own health over the last second, the live
// counterpart of ClientHealth: Delay is "" (fine) or one of its verdicts
// ("cpu_throttled", "cpu_bound", "host_delayed"), with what it rests on.
type ClientLive struct {
	Delay            string
	CPUUtilization   float64 // of Cores
	Cores            int
	HostOtherCPU     float64 // share of the machine other processes used, when HostMeasured
	HostMeasured     bool
	ThrottledPeriods int64
	Throttled        time.Duration
	CPUQuota         float64 // cores; 0 for no limit or not read
}

// Warning says what is wrong with the client's timestamps right now and what
// follows, "" when nothing is.
func (c ClientLive) Warning() string {
	switch c.Delay {
	case "cpu_throttled":
		limit := ""
		if c.CPUQuota > 0 {
			limit = fmt.Sprintf(" (%g cores)", c.CPUQuota)
		}
		return fmt.Sprintf("its container's CPU limit%s stopped it %d times (%.0f ms) in the last second: latencies include the pauses", limit, c.ThrottledPeriods, float64(c.Throttled)/float64(time.Millisecond))
	case "cpu_bound":
		return fmt.Sprintf("CPU-bound (%.0f%% of %d cores): latencies include its own delay", 100*c.CPUUtilization, c.Cores)
	case "host_delayed":
		if c.HostMeasured {
			return fmt.Sprintf("other processes took its cores (%.0f%% of the machine): latencies include the wait", 100*c.HostOtherCPU)
		}
		return "its goroutines waited to run: latencies include the wait"
	}
	return ""
}
