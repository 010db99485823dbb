package run

import (
	"time"

	"github.com/llmbench-org/llmbench/live"
	"github.com/llmbench-org/llmbench/rundir"
)

// recording is the run's two own sinks: the run directory's writer
// (requests.jsonl and scrapes.jsonl appended as each record and row arrives,
// every whole file written atomically) and the live window the views read.
// Each is a Sink of its own (add wires both); the live window is also the
// request and phase observer that counts what is in flight.
type recording struct {
	*rundir.Writer
	view *live.Window
}

// createRecording creates the run directory dir (or dir-2, ... when dir
// exists) with its raw files, and the live window; start is the run clock's
// origin.
func createRecording(dir string, start time.Time) (*recording, error) {
	w, err := rundir.New(dir)
	if err != nil {
		return nil, err
	}
	return &recording{Writer: w, view: live.NewWindow(start)}, nil
}

// addTo wires both sinks into outs: the writer first, so a record is on
// disk before the live view shows it.
func (r *recording) addTo(outs *outputs) {
	outs.add(r.Writer)
	outs.add(r.view)
}

// startLive sets the live view up from the run's metadata: the engine's
// dialect for the live reconciliation, the SLO, the scenario's percentiles.
// Call it before the first record.
func (r *recording) startLive(m rundir.RunMeta) {
	r.view.SetDialect(m.Engine.Dialect)
	if m.SLO != nil {
		r.view.SetSLO(*m.SLO)
	}
	r.view.SetPercentiles(m.Percentiles)
}

// Progress is the live view's snapshot, for whoever watches.
func (r *recording) Progress() live.Progress { return r.view.Progress() }
