package live

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// Window is the live view's state while a run goes on: each finished
// request and scrape row is folded into a trailing window (Record, Row: a
// sink of the run, called on its one consumer goroutine), and Progress
// reads a snapshot of it for the TUI and the plain lines, from any
// goroutine.
type Window struct {
	start time.Time

	sent  atomic.Int64           // requests handed to the client (Begin), for the in-flight count
	ended atomic.Int64           // requests the client returned (End)
	phase atomic.Pointer[string] // the phase being driven, for the live view

	mu    sync.Mutex // guards live and recon, written by Record and Row, read by Progress
	live  window
	recon *reconcile.Live // the live reconciliation; nil until SetDialect
	// client and clientPrev are the client's last two looks at itself
	// (SetClient): a verdict is shown once both agree on it.
	client, clientPrev ClientLive
	// silent and silentFor are the last SetSilent.
	silent    int
	silentFor time.Duration
}

// Span is the trailing window the live rates and quantiles cover.
const Span = 10 * time.Second

// NewWindow starts an empty live window; start is the run clock's origin.
func NewWindow(start time.Time) *Window {
	return &Window{start: start, live: newWindow(Span)}
}

// SetDialect starts the live reconciliation of the client's records with the
// engine's scrapes, in the engine's metric dialect; call it before Record.
func (w *Window) SetDialect(dialect string) {
	w.mu.Lock()
	w.recon = reconcile.NewLive(w.live.span, dialect)
	w.mu.Unlock()
}

// SetSLO makes the live view count goodput against slo; call it before
// Record.
func (w *Window) SetSLO(slo rundir.SLO) {
	w.mu.Lock()
	w.live.slo = &slo
	w.mu.Unlock()
}

// SetPercentiles makes the live view read its latency quantiles at ps (the
// scenario's report.percentiles), as the final report does; call it before
// Record.
func (w *Window) SetPercentiles(ps []float64) {
	if len(ps) == 0 {
		return
	}
	w.mu.Lock()
	w.live.percentiles = slices.Clone(ps)
	w.mu.Unlock()
}

// SetClient records the client's look at itself over the last second (the
// run takes one every second); safe from any goroutine.
func (w *Window) SetClient(c ClientLive) {
	w.mu.Lock()
	w.clientPrev, w.client = w.client, c
	w.mu.Unlock()
}

// SetSilent records how many requests in flight have received no byte,
// and for how long the oldest has waited (the run looks a few times a
// second: client.Client.Silent); safe from any goroutine.
func (w *Window) SetSilent(n int, longest time.Duration) {
	w.mu.Lock()
	w.silent, w.silentFor = n, longest
	w.mu.Unlock()
}

// SetPhase tells the live view which phase is being driven.
func (w *Window) SetPhase(name string) { w.phase.Store(&name) }

// Begin counts a request handed to the client; safe from any goroutine.
func (w *Window) Begin() { w.sent.Add(1) }

// End counts a request the client returned (before its record reaches
// Record, so the in-flight count never includes a finished request).
func (w *Window) End() { w.ended.Add(1) }

// Record folds one finished request into the window.
func (w *Window) Record(rec client.Record) error {
	now := time.Since(w.start)
	w.mu.Lock()
	w.live.addRecord(&rec, now)
	if w.recon != nil {
		w.recon.AddRecord(rec)
	}
	w.mu.Unlock()
	return nil
}

// Row folds one scrape attempt into the window, redacted (its error is
// shown on every frame).
func (w *Window) Row(row scrape.Row) error {
	rundir.RedactRow(&row)
	w.mu.Lock()
	w.live.addRow(&row)
	if w.recon != nil {
		w.recon.AddRow(row)
	}
	w.mu.Unlock()
	return nil
}

// Close ends nothing: the window stays readable for the views' last look.
func (w *Window) Close() error { return nil }

// Progress is a snapshot of the live window, cheap enough to call at 4 Hz.
func (w *Window) Progress() Progress {
	now := time.Since(w.start)
	sent := int(w.sent.Load())
	inFlight := max(0, sent-int(w.ended.Load()))
	w.mu.Lock()
	p := w.live.progress(now)
	if w.recon != nil {
		p.Findings = w.recon.Findings(now, inFlight)
	}
	p.Client = w.client
	p.Silent, p.SilentFor = w.silent, w.silentFor
	if w.clientPrev.Delay != w.client.Delay {
		p.Client.Delay = "" // one look is not a verdict: a second must agree
	}
	w.mu.Unlock()
	p.Elapsed = now
	if ph := w.phase.Load(); ph != nil {
		p.Phase = *ph
	}
	p.Sent, p.InFlight = sent, inFlight
	return p
}
