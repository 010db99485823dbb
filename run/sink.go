package run

import (
	"fmt"
	"strings"
	"sync"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// A Sink receives what a run measures: every finished request and every scrape row, in the order
// they arrive, on the run's single consumer goroutine (so a sink needs no lock of its own).
type Sink interface {
	Record(client.Record) error
	Row(scrape.Row) error
	Close() error
}

// A sink also hears, when it implements these, of each request as the sender
// hands it to the client and gets it back (the live view's in-flight count,
// llmbench's own in-flight gauge), and of each phase as it starts. These are
// called from the sender's goroutines and the driver's, not the consumer's:
// what they touch must be safe for that (an atomic counter).
type (
	// RequestObserver is told of each request as it is sent (Begin) and as
	// the client returns it (End), before its record reaches the sinks, so
	// an in-flight count never holds a finished request. Once per request,
	// never per chunk: it must be as cheap as an atomic add.
	RequestObserver interface {
		Begin()
		End()
	}
	// PhaseObserver is told the name of each phase as it starts.
	PhaseObserver interface {
		SetPhase(name string)
	}
)

// SinkError is a sink's failure, naming the sink: the first one stops the
// run, as a run directory that can no longer be written does.
type SinkError struct {
	Sink string // the sink's String(), or its type
	Err  error
}

func (e *SinkError) Error() string { return e.Sink + ": " + e.Err.Error() }
func (e *SinkError) Unwrap() error { return e.Err }

// sinkName is how errors name s: its String() when it has one (the run
// directory names its path), else its type.
func sinkName(s Sink) string {
	if n, ok := s.(fmt.Stringer); ok {
		return n.String()
	}
	return fmt.Sprintf("sink %T", s)
}

// Buffers between the request path and the consumer: a burst of finished
// requests (or a slow disk for a moment) does not hold back the sender.
const (
	recordsBuffer = 1024
	rowsBuffer    = 64
)

// outputs fans what a run measures out to its sinks: the records and rows
// channels, the one goroutine that drains them (consume), and the observers
// among the sinks. A new output is a Sink and one add.
type outputs struct {
	sinks     []Sink
	observers []RequestObserver
	phases    []PhaseObserver

	records chan client.Record // nil until start
	rows    chan scrape.Row
	done    chan struct{} // closed when consume has returned
	failed  chan struct{} // closed at the first sink error, which err then holds
	err     error

	closeOnce sync.Once
	closeErr  error
}

func newOutputs(sinks ...Sink) *outputs {
	o := &outputs{failed: make(chan struct{})}
	for _, s := range sinks {
		o.add(s)
	}
	return o
}

// add wires s in: it gets every record and row, and is an observer as well
// when it implements RequestObserver or PhaseObserver. Call it before start.
func (o *outputs) add(s Sink) {
	o.sinks = append(o.sinks, s)
	if r, ok := s.(RequestObserver); ok {
		o.observers = append(o.observers, r)
	}
	if p, ok := s.(PhaseObserver); ok {
		o.phases = append(o.phases, p)
	}
}

// start opens the channels and starts the consumer.
func (o *outputs) start() {
	o.records = make(chan client.Record, recordsBuffer)
	o.rows = make(chan scrape.Row, rowsBuffer)
	o.done = make(chan struct{})
	go o.consume()
}

// consume hands every record and row to every sink until both channels are
// closed. Each is redacted once here, so no sink (a file, a live view, an
// exporter) ever holds a secret that an error message echoed. A sink that
// failed is still handed what follows, as the run directory still tries to
// append after a failed write: the run stops, but what was measured before
// it stopped is kept wherever it can be.
func (o *outputs) consume() {
	defer close(o.done)
	records, rows := o.records, o.rows
	for records != nil || rows != nil {
		select {
		case rec, ok := <-records:
			if !ok {
				records = nil
				continue
			}
			rundir.RedactRecord(&rec)
			for _, s := range o.sinks {
				o.keep(s, s.Record(rec))
			}
		case row, ok := <-rows:
			if !ok {
				rows = nil
				continue
			}
			rundir.RedactRow(&row)
			for _, s := range o.sinks {
				o.keep(s, s.Row(row))
			}
		}
	}
}

// keep remembers the first sink error and says so on failed.
func (o *outputs) keep(s Sink, err error) {
	if err != nil && o.err == nil {
		o.err = &SinkError{Sink: sinkName(s), Err: err}
		close(o.failed)
	}
}

// failure is closed at the first sink error; firstErr then tells it.
func (o *outputs) failure() <-chan struct{} { return o.failed }
func (o *outputs) firstErr() error          { return o.err }

// Begin and End tell every RequestObserver.
func (o *outputs) Begin() {
	for _, r := range o.observers {
		r.Begin()
	}
}

func (o *outputs) End() {
	for _, r := range o.observers {
		r.End()
	}
}

// phaseStarted tells every PhaseObserver.
func (o *outputs) phaseStarted(name string) {
	for _, p := range o.phases {
		p.SetPhase(name)
	}
}

// close drains the channels (the producers must be done), then closes every
// sink, once; later calls return the same error: the first sink error, then
// every Close error, each naming its sink.
func (o *outputs) close() error {
	o.closeOnce.Do(func() {
		if o.records != nil {
			close(o.records)
			close(o.rows)
			<-o.done
		}
		var errs []error
		if o.err != nil {
			errs = append(errs, o.err)
		}
		for _, s := range o.sinks {
			if err := s.Close(); err != nil {
				errs = append(errs, &SinkError{Sink: sinkName(s), Err: err})
			}
		}
		o.closeErr = joinErrors(errs)
	})
	return o.closeErr
}

// joinErrors is errs as one error on one line (nil for none).
func joinErrors(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return &joinedErrors{errs}
}

// joinedErrors is errors.Join's on one line (a pointer: comparable).
type joinedErrors struct{ errs []error }

func (e *joinedErrors) Error() string {
	msgs := make([]string, len(e.errs))
	for i, err := range e.errs {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e *joinedErrors) Unwrap() []error { return e.errs }
