package run

import (
	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/live"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// consume hands every record and row to the run's sinks, the run
// directory's writer first and then the live window, on this one goroutine
// (so neither takes a lock per record for the other), until both channels
// are closed. It returns the first error after draining, so producers never
// block on a failed disk.
func consume(records <-chan client.Record, rows <-chan scrape.Row, out *rundir.Writer, view *live.Window) error {
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
			keep(out.Record(rec))
			keep(view.Record(rec))
		case row, ok := <-rows:
			if !ok {
				rows = nil
				continue
			}
			keep(out.Row(row))
			keep(view.Row(row))
		}
	}
	return firstErr
}
