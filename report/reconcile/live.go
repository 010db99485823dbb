package reconcile

import (
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
// as new ones arrive, at amortised constant cost per arrival (arrivals).
//
// Gauge staleness is left to the final reconciliation: telling an idle
// engine from a frozen gauge needs the requests still in flight, which a
// window of finished records does not have.
//
// Live is not safe for concurrent use; the recorder calls it under its lock.
type Live struct {
	span    time.Duration
	dialect string
	records arrivals[client.Record] // ended within the window, in arrival order
	rows    arrivals[scrape.Row]    // taken within the window, in arrival order
}

// NewLive returns a live reconciler over a trailing window of span, for an
// engine of the given dialect ("" = the snapshots' own).
func NewLive(span time.Duration, dialect string) *Live {
	return &Live{span: span, dialect: dialect,
		records: arrivals[client.Record]{at: func(r *client.Record) time.Duration { return r.End }},
		rows:    arrivals[scrape.Row]{at: func(r *scrape.Row) time.Duration { return r.At }}}
}

// AddRecord takes a finished request.
func (l *Live) AddRecord(r client.Record) {
	l.records.add(r)
	l.trim(r.End)
}

// AddRow takes a scrape.
func (l *Live) AddRow(r scrape.Row) {
	l.rows.add(r)
	l.trim(r.At)
}

// trim drops what ended before the window that ends at now. It runs for
// every record, so it must not walk the window (decision 0602: a walk per
// record took 60-70 % of a non-streamed run's CPU at a few thousand requests
// a second); what it cannot drop from the front at once goes at the next
// Findings.
func (l *Live) trim(now time.Duration) {
	from := now - l.span
	l.records.cut(from)
	l.rows.cut(from)
}

// Findings reconciles the window that ends at now (on the run clock), with
// inFlight requests sent and not yet finished. The closing scrape is the
// last one that finished at least edgeSlack before now, so requests the
// engine counted just before it have had time to reach the client. With no
// two successful scrapes in the window only scrape health is reported.
func (l *Live) Findings(now time.Duration, inFlight int) []Finding {
	l.trim(now)
	return l.findings(now, l.records.held(), l.rows.held(), inFlight)
}

// findings reconciles records and rows, what the window holds at now.
func (l *Live) findings(now time.Duration, records []client.Record, rows []scrape.Row, inFlight int) []Finding {
	before, after := bracket(rows, now)
	in := Input{Records: records, Rows: rows, Dialect: l.dialect, InFlight: inFlight}
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

// bracket picks the first and the last successful scrape of one target
// among rows (the target with the most of them; the first URL on a tie),
// or nil when no target has two.
func bracket(rows []scrape.Row, now time.Duration) (before, after *scrape.Row) {
	okRows := map[string][]int{}
	for i := range rows {
		r := &rows[i]
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
	first, last := &rows[idx[0]], &rows[idx[0]]
	for _, i := range idx {
		if rows[i].At < first.At {
			first = &rows[i]
		}
		if rows[i].At > last.At {
			last = &rows[i]
		}
	}
	b, a := *first, *last
	return &b, &a
}
