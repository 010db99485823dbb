package report

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

// Recorder is a run directory's writer (rundir.Writer) and the live window
// that Progress reports, fed together by Consume.
type Recorder struct {
	*rundir.Writer
	start time.Time

	sent  atomic.Int64           // requests handed to the client (Begin), for the in-flight count
	ended atomic.Int64           // requests the client returned (End)
	phase atomic.Pointer[string] // the phase being driven, for the live view

	mu    sync.Mutex // guards live and recon, written by Consume, read by Progress
	live  liveWindow
	recon *reconcile.Live // the live reconciliation; nil until SetDialect
	// client and clientPrev are the client's last two looks at itself
	// (SetClient): a verdict is shown once both agree on it.
	client, clientPrev ClientLive
}

// NewRecorder creates a new run directory (rundir.New). start is the run
// clock's origin.
func NewRecorder(dir string, start time.Time) (*Recorder, error) {
	w, err := rundir.New(dir)
	if err != nil {
		return nil, err
	}
	return &Recorder{Writer: w, start: start, live: newLiveWindow(10 * time.Second)}, nil
}

// SetDialect starts the live reconciliation of the client's records with the
// engine's scrapes, in the engine's metric dialect; call it before Consume.
func (r *Recorder) SetDialect(dialect string) {
	r.mu.Lock()
	r.recon = reconcile.NewLive(r.live.span, dialect)
	r.mu.Unlock()
}

// SetSLO makes the live view count goodput against slo; call it before
// Consume.
func (r *Recorder) SetSLO(slo rundir.SLO) {
	r.mu.Lock()
	r.live.slo = &slo
	r.mu.Unlock()
}

// SetPercentiles makes the live view read its latency quantiles at ps (the
// scenario's report.percentiles), as the final report does; call it before
// Consume.
func (r *Recorder) SetPercentiles(ps []float64) {
	if len(ps) == 0 {
		return
	}
	r.mu.Lock()
	r.live.percentiles = slices.Clone(ps)
	r.mu.Unlock()
}

// SetClient records the client's look at itself over the last second (the
// run takes one every second); safe from any goroutine.
func (r *Recorder) SetClient(c ClientLive) {
	r.mu.Lock()
	r.clientPrev, r.client = r.client, c
	r.mu.Unlock()
}

// SetPhase tells the live view which phase is being driven.
func (r *Recorder) SetPhase(name string) { r.phase.Store(&name) }

// Begin counts a request handed to the client; safe from any goroutine.
func (r *Recorder) Begin() { r.sent.Add(1) }

// End counts a request the client returned (before its record reaches
// Consume, so the in-flight count never includes a finished request).
func (r *Recorder) End() { r.ended.Add(1) }

// Consume appends every record and row to the run directory until both
// channels are closed, and returns the first write error (after draining, so
// producers never block on a failed disk).
func (r *Recorder) Consume(records <-chan client.Record, rows <-chan scrape.Row) error {
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for records != nil || rows != nil {
		select {
		case rec, ok := <-records:
			if !ok {
				records = nil
				continue
			}
			keep(r.Writer.Record(rec))
			r.mu.Lock()
			r.live.addRecord(&rec, time.Since(r.start))
			if r.recon != nil {
				r.recon.AddRecord(rec)
			}
			r.mu.Unlock()
		case row, ok := <-rows:
			if !ok {
				rows = nil
				continue
			}
			keep(r.Writer.Row(row))
			rundir.RedactRow(&row)
			r.mu.Lock()
			r.live.addRow(&row)
			if r.recon != nil {
				r.recon.AddRow(row)
			}
			r.mu.Unlock()
		}
	}
	return firstErr
}

// Progress is a snapshot of the live window, cheap enough to call at 4 Hz.
func (r *Recorder) Progress() Progress {
	now := time.Since(r.start)
	sent := int(r.sent.Load())
	inFlight := max(0, sent-int(r.ended.Load()))
	r.mu.Lock()
	p := r.live.progress(now)
	if r.recon != nil {
		p.Findings = r.recon.Findings(now, inFlight)
	}
	p.Client = r.client
	if r.clientPrev.Delay != r.client.Delay {
		p.Client.Delay = "" // one look is not a verdict: a second must agree
	}
	r.mu.Unlock()
	p.Elapsed = now
	if ph := r.phase.Load(); ph != nil {
		p.Phase = *ph
	}
	p.Sent, p.InFlight = sent, inFlight
	return p
}
