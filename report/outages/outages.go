// Package outages says when the engine could not be reached, from the
// client's records alone: the one owner of what an outage is, for the
// summary (Find) and the live view (Tracker). See docs/decisions/0045.
//
// A request that could not reach the engine (connection refused, or reset
// before any response byte: client.ErrConnect) opens an outage window at
// its send; the window closes at the send of the first request after it
// that shows the engine serving again (Back). A window no
// request closed is open: the engine was still unreachable when the run
// ended.
package outages

import (
	"slices"
	"sort"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// Window is one outage, on the run clock.
type Window struct {
	Start time.Duration // the send of its first failed attempt
	// End is the send of the first request after Start that reached the
	// engine; for an Open window, the end of its last failed attempt.
	End  time.Duration
	Open bool
	// Attempts are the requests that could not reach the engine in it;
	// Arrivals those of them that were open-loop arrivals (each fails
	// once: they are counted apart, not retried); Affected every failed
	// request that ended in it, attempts included (a stream the outage
	// cut among them).
	Attempts, Arrivals, Affected int
}

// Length is how long the window lasted.
func (w Window) Length() time.Duration { return w.End - w.Start }

// Unreached says r could not reach the engine: it opens or extends an outage.
func Unreached(r *client.Record) bool { return r.ErrorClass == client.ErrConnect }

// Reached says the engine answered r (a status, or any response byte).
func Reached(r *client.Record) bool {
	return r.ErrorClass != client.ErrConnect && (r.Status != 0 || r.FirstByte > 0)
}

// Back says r shows the engine serving again, so it closes an outage sent
// before it: it reached the engine on a connection opened for it (the
// engine accepts connections: any status or response byte, a 503 included),
// or it got a whole successful answer on a kept-alive one. A kept-alive
// connection proves less: an engine going down stops listening before its
// open connections are closed, and one still open can carry a 503 or a
// stream's first bytes out of the stopping engine after a new connection
// was refused (met under -race: a window split in two 1.3 ms after it
// opened). Decision 0045.
func Back(r *client.Record) bool {
	return Reached(r) && (!r.Reused || r.OK())
}

// Find is every outage among records (in any order), in time order. It
// keeps only the failed attempts in memory: a run without one costs a pass.
func Find(records []client.Record) []Window {
	var fails []int // indices of unreached records
	for i := range records {
		if Unreached(&records[i]) {
			fails = append(fails, i)
		}
	}
	if len(fails) == 0 {
		return nil
	}
	sent := func(k int) time.Duration { return records[fails[k]].Sent }
	slices.SortStableFunc(fails, func(a, b int) int { return int(records[a].Sent - records[b].Sent) })
	// firstReach[k] is the earliest send of a request that showed the
	// engine back at or after failure k and before failure k+1 (-1: none).
	firstReach := make([]time.Duration, len(fails))
	for k := range firstReach {
		firstReach[k] = -1
	}
	for i := range records {
		r := &records[i]
		if !Back(r) {
			continue
		}
		k := sort.Search(len(fails), func(k int) bool { return sent(k) > r.Sent }) - 1
		if k >= 0 && (firstReach[k] < 0 || r.Sent < firstReach[k]) {
			firstReach[k] = r.Sent
		}
	}
	var out []Window
	open := false
	for k, i := range fails {
		r := &records[i]
		if !open {
			out = append(out, Window{Start: r.Sent, End: r.End, Open: true})
			open = true
		}
		w := &out[len(out)-1]
		w.Attempts++
		if r.Scheduled() {
			w.Arrivals++
		}
		w.End = max(w.End, r.End)
		if firstReach[k] >= 0 {
			w.End, w.Open = firstReach[k], false
			open = false
		}
	}
	affected(records, out)
	return out
}

// affected counts, in each window, the failed requests other than its
// attempts that ended in it, and adds its attempts.
func affected(records []client.Record, ws []Window) {
	for i := range records {
		r := &records[i]
		if r.OK() || r.ErrorClass == client.ErrCanceled || Unreached(r) {
			continue
		}
		if k := At(ws, r.End); k >= 0 {
			ws[k].Affected++
		}
	}
	for k := range ws {
		ws[k].Affected += ws[k].Attempts
	}
}

// At is the index of the window holding t (ends included), -1 for none.
// ws must be in time order and not overlap, as Find returns them.
func At(ws []Window, t time.Duration) int {
	k := sort.Search(len(ws), func(k int) bool { return ws[k].End >= t })
	if k < len(ws) && ws[k].Start <= t {
		return k
	}
	return -1
}

// Clear says the span [from, to] touches no window: a request that lived
// there is measured outside the outages.
func Clear(ws []Window, from, to time.Duration) bool {
	k := sort.Search(len(ws), func(k int) bool { return ws[k].End >= from })
	return k == len(ws) || ws[k].Start > to
}

// Total is the windows' summed length.
func Total(ws []Window) time.Duration {
	var d time.Duration
	for _, w := range ws {
		d += w.Length()
	}
	return d
}

// Tracker follows outages as records finish, for a live view: a window
// opens at a failed attempt and closes when a request sent after its start
// shows the engine back (Back). Records arrive as requests end, so a window closes
// when the first such request ends (a stream later than Find's end, which
// is that request's send). Not safe for concurrent use.
type Tracker struct {
	cur    Window
	open   bool
	closed int
}

// Add takes one finished record into account.
func (t *Tracker) Add(r *client.Record) {
	switch {
	case Unreached(r):
		if !t.open {
			t.cur, t.open = Window{Start: r.Sent, Open: true}, true
		}
		t.cur.Attempts++
		t.cur.End = max(t.cur.End, r.End)
	case t.open && Back(r) && r.Sent >= t.cur.Start:
		t.open = false
		t.closed++
	}
}

// Current is the window open now, if any (its End: the last failed attempt's).
func (t *Tracker) Current() (Window, bool) { return t.cur, t.open }

// Closed is how many windows have closed so far.
func (t *Tracker) Closed() int { return t.closed }
