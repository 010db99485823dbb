package reconcile

import (
	"slices"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

// Live reconciles the trailing window of a run while it goes on, for the live
// view. The recorder hands it every finished record and every scrape row;
// Findings runs the checks over the last Span: the two scrapes of one target
// that bracket the window play the phase snapshots, and the records that
// ended between them are the client's side. Memory and work are bounded by
// what one window holds; records and rows older than the window are dropped
// as new ones arrive.
//
// Gauge staleness is left to the final reconciliation: telling an idle
// engine from a frozen gauge needs the requests still in flight, which a
// window of finished records does not have.
//
// Live is not safe for concurrent use; the recorder calls it under its lock.
type Live struct {
	span    time.Duration
	dialect string
	records []client.Record // ended within the window, in arrival order
	rows    []scrape.Row    // taken within the window, in arrival order
}

// NewLive returns a live reconciler over a trailing window of span, for an
// engine of the given dialect ("" = the snapshots' own).
func NewLive(span time.Duration, dialect string) *Live {
	return &Live{span: span, dialect: dialect}
}

// AddRecord takes a finished request.
func (l *Live) AddRecord(r client.Record) {
	l.records = append(l.records, r)
	l.trim(r.End)
}

// AddRow takes a scrape.
func (l *Live) AddRow(r scrape.Row) {
	l.rows = append(l.rows, r)
	l.trim(r.At)
}

// trim drops what ended before the window that ends at now; slices are
// reused in place, so memory stays at the window's high-water mark.
func (l *Live) trim(now time.Duration) {
	from := now - l.span
	l.records = slices.DeleteFunc(l.records, func(r client.Record) bool { return r.End < from })
	l.rows = slices.DeleteFunc(l.rows, func(r scrape.Row) bool { return r.At < from })
}

// Findings reconciles the window that ends at now (on the run clock), with
// inFlight requests sent and not yet finished. The closing scrape is the
// last one that finished at least edgeSlack before now, so requests the
// engine counted just before it have had time to reach the client. With no
// two successful scrapes in the window only scrape health is reported.
func (l *Live) Findings(now time.Duration, inFlight int) []Finding {
	l.trim(now)
	before, after := l.bracket(now)
	in := Input{Records: l.records, Rows: l.rows, Dialect: l.dialect, InFlight: inFlight}
	if before != nil {
		in.Windows = []Window{{Name: "live", Measured: true, Start: before.At, End: after.At, Before: before, After: after}}
	}
	a := analyse(in)
	out := a.scrapeHealth()
	if !a.paired() {
		return out
	}
	if f, ok := a.counterResets(); ok {
		out = append(out, f)
	}
	if f, ok := a.invalidValues(); ok {
		out = append(out, f)
	}
	out = append(out, a.pairedFindings()...)
	if f, ok := a.kvPressure(); ok {
		out = append(out, f)
	}
	if f, ok := a.bucketCeilings(); ok {
		out = append(out, f)
	}
	return out
}

// bracket picks the first and the last successful scrape of one target in
// the window (the target with the most of them; the first URL on a tie),
// or nil when no target has two.
func (l *Live) bracket(now time.Duration) (before, after *scrape.Row) {
	okRows := map[string][]int{}
	for i := range l.rows {
		r := &l.rows[i]
		if usable(r) && r.At+r.Duration <= now-edgeSlack {
			okRows[r.Target] = append(okRows[r.Target], i)
		}
	}
	best := ""
	for t, idx := range okRows {
		if len(idx) < 2 {
			continue
		}
		if best == "" || len(idx) > len(okRows[best]) || len(idx) == len(okRows[best]) && t < best {
			best = t
		}
	}
	if best == "" {
		return nil, nil
	}
	idx := okRows[best]
	first, last := &l.rows[idx[0]], &l.rows[idx[0]]
	for _, i := range idx {
		if l.rows[i].At < first.At {
			first = &l.rows[i]
		}
		if l.rows[i].At > last.At {
			last = &l.rows[i]
		}
	}
	b, a := *first, *last
	return &b, &a
}
