package run

import (
	"errors"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/scrape"
)

// recording is the run directory and the live view while the run goes on,
// as one Sink (and RequestObserver, PhaseObserver): today both are one
// report.Recorder, which appends each record and row to requests.jsonl and
// scrapes.jsonl and folds it into the live window. Every call the run makes
// on the Recorder is in this file, so that splitting it (the run directory's
// writer, the live window: two sinks) changes this file alone.
//
// The Recorder takes records and rows on channels only (Consume, on its own
// goroutine), so a failed write reaches Record or Row one call late, through
// Broken, and its cause only at Close.
type recording struct {
	rec      *report.Recorder
	records  chan client.Record // to the Recorder's Consume; nil until startLive
	rows     chan scrape.Row
	consumed chan error // what Consume returned
}

// errRunDirBroken is what Record and Row return once a write failed (a full
// disk); Close returns the failed write itself.
var errRunDirBroken = errors.New("can no longer be written")

// createRecording creates the run directory dir (or dir-2, ... when dir
// exists) with its raw files; start is the run clock's origin.
func createRecording(dir string, start time.Time) (*recording, error) {
	rec, err := report.NewRecorder(dir, start)
	if err != nil {
		return nil, err
	}
	return &recording{rec: rec}, nil
}

// Dir is the run directory.
func (r *recording) Dir() string    { return r.rec.Dir() }
func (r *recording) String() string { return "the run directory " + r.rec.Dir() }

// WriteFile and WriteJSON write a whole file of the run directory
// atomically (WriteJSON redacts a RunMeta).
func (r *recording) WriteFile(name string, data []byte) error { return r.rec.WriteFile(name, data) }
func (r *recording) WriteJSON(name string, v any) error       { return r.rec.WriteJSON(name, v) }

// startLive sets the live view up from the run's metadata (the engine's
// dialect for the live reconciliation, the SLO, the scenario's percentiles)
// and starts the Recorder's consumer: call it before the first Record.
func (r *recording) startLive(m report.RunMeta) {
	r.rec.SetDialect(m.Engine.Dialect)
	if m.SLO != nil {
		r.rec.SetSLO(*m.SLO)
	}
	r.rec.SetPercentiles(m.Percentiles)
	r.records, r.rows = make(chan client.Record, recordsBuffer), make(chan scrape.Row, rowsBuffer)
	r.consumed = make(chan error, 1)
	go func() { r.consumed <- r.rec.Consume(r.records, r.rows) }()
}

func (r *recording) Record(rec client.Record) error { r.records <- rec; return r.broken() }
func (r *recording) Row(row scrape.Row) error       { r.rows <- row; return r.broken() }

// broken is errRunDirBroken once a write of the raw files failed.
func (r *recording) broken() error {
	select {
	case <-r.rec.Broken():
		return errRunDirBroken
	default:
		return nil
	}
}

// Close waits until the Recorder has appended everything, then syncs and
// closes the raw files; it returns the first failed write.
func (r *recording) Close() error {
	var err error
	if r.consumed != nil {
		close(r.records)
		close(r.rows)
		err = <-r.consumed
	}
	if cerr := r.rec.Close(); err == nil {
		err = cerr
	}
	return err
}

// The live view: requests in flight, the phase, the client's look at
// itself, and the snapshot the views read.
func (r *recording) Begin()                        { r.rec.Begin() }
func (r *recording) End()                          { r.rec.End() }
func (r *recording) SetPhase(name string)          { r.rec.SetPhase(name) }
func (r *recording) SetClient(c report.ClientLive) { r.rec.SetClient(c) }
func (r *recording) Progress() report.Progress     { return r.rec.Progress() }
