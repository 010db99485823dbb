package outages

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/client"
)

const ms = time.Millisecond

// rec builds a record: kind "x" could not reach the engine, "ok" succeeded,
// "503" was answered 503, "cut" is a stream cut after its headers, "c" was
// canceled; intended marks an open-loop arrival.
func rec(kind string, sent, end time.Duration, intended bool) client.Record {
	r := client.Record{Sent: sent, End: end}
	if intended {
		r.Intended = sent
	}
	switch kind {
	case "x":
		r.ErrorClass = client.ErrConnect
	case "ok":
		r.Status, r.FirstByte = 200, sent+ms
	case "503":
		r.Status, r.ErrorClass = 503, client.ErrHTTPStatus
	case "cut":
		r.Status, r.FirstByte, r.ErrorClass = 200, sent+ms, client.ErrStreamBroken
	case "c":
		r.ErrorClass = client.ErrCanceled
	}
	return r
}

func TestFind(t *testing.T) {
	for _, tc := range []struct {
		name string
		rs   []client.Record
		want []Window
	}{
		{name: "no failure", rs: []client.Record{rec("ok", 0, 100*ms, false), rec("503", 10*ms, 11*ms, false)}},
		{name: "one window closed by the next reaching send",
			rs: []client.Record{rec("ok", 0, 100*ms, false), rec("x", 200*ms, 201*ms, false), rec("x", 250*ms, 251*ms, false),
				rec("ok", 400*ms, 900*ms, false)},
			want: []Window{{Start: 200 * ms, End: 400 * ms, Attempts: 2, Affected: 2}}},
		{name: "records in any order, the earliest reaching send closes",
			rs: []client.Record{rec("ok", 500*ms, 600*ms, false), rec("ok", 420*ms, 2000*ms, false), rec("x", 300*ms, 301*ms, false),
				rec("x", 200*ms, 201*ms, false)},
			want: []Window{{Start: 200 * ms, End: 420 * ms, Attempts: 2, Affected: 2}}},
		{name: "a request sent before the window does not close it",
			rs:   []client.Record{rec("ok", 100*ms, 500*ms, false), rec("x", 200*ms, 201*ms, false), rec("ok", 300*ms, 400*ms, false)},
			want: []Window{{Start: 200 * ms, End: 300 * ms, Attempts: 1, Affected: 1}}},
		{name: "a 503 answer closes it: the engine was reached",
			rs:   []client.Record{rec("x", 200*ms, 201*ms, false), rec("503", 260*ms, 262*ms, false)},
			want: []Window{{Start: 200 * ms, End: 260 * ms, Attempts: 1, Affected: 1}}},
		{name: "two windows",
			rs: []client.Record{rec("x", 100*ms, 101*ms, false), rec("ok", 200*ms, 300*ms, false), rec("x", 1000*ms, 1001*ms, false),
				rec("x", 1100*ms, 1101*ms, false), rec("ok", 1300*ms, 1400*ms, false)},
			want: []Window{{Start: 100 * ms, End: 200 * ms, Attempts: 1, Affected: 1}, {Start: 1000 * ms, End: 1300 * ms, Attempts: 2, Affected: 2}}},
		{name: "still down at the end: open, to the last attempt's end",
			rs:   []client.Record{rec("ok", 0, 50*ms, false), rec("x", 100*ms, 101*ms, false), rec("x", 300*ms, 302*ms, false)},
			want: []Window{{Start: 100 * ms, End: 302 * ms, Open: true, Attempts: 2, Affected: 2}}},
		{name: "open-loop arrivals counted apart; canceled requests are nothing",
			rs: []client.Record{rec("x", 100*ms, 101*ms, true), rec("x", 150*ms, 151*ms, true), rec("x", 160*ms, 161*ms, false),
				rec("c", 170*ms, 180*ms, false), rec("ok", 300*ms, 400*ms, true)},
			want: []Window{{Start: 100 * ms, End: 300 * ms, Attempts: 3, Arrivals: 2, Affected: 3}}},
		{name: "a failed request that ended in the window is affected",
			rs: []client.Record{rec("cut", 0, 150*ms, false), rec("x", 100*ms, 101*ms, false), rec("cut", 50*ms, 400*ms, false),
				rec("ok", 300*ms, 350*ms, false)},
			want: []Window{{Start: 100 * ms, End: 300 * ms, Attempts: 1, Affected: 2}}},
		// Busy-test run 9 (-race beside two hogs): the engine stopped
		// listening, a dial was refused, and 1.3 ms later a request on a
		// kept-alive connection it had not yet closed reached it; the
		// outage read as two.
		{name: "a kept-alive connection the stopping engine still held does not close it",
			rs: []client.Record{rec("ok", 0, 100*ms, false), rec("x", 4000*ms, 4000*ms+500*time.Microsecond, false),
				reused(rec("503", 4001*ms+300*time.Microsecond, 4002*ms, false)),
				reused(rec("cut", 4001*ms+500*time.Microsecond, 4003*ms, false)),
				rec("x", 4060*ms, 4061*ms, false), rec("x", 4160*ms, 4161*ms, false), rec("ok", 4320*ms, 4400*ms, false)},
			want: []Window{{Start: 4000 * ms, End: 4320 * ms, Attempts: 3, Affected: 5}}},
		{name: "a whole answer on a kept-alive connection closes it",
			rs:   []client.Record{rec("x", 200*ms, 201*ms, false), reused(rec("ok", 230*ms, 260*ms, false)), rec("x", 300*ms, 301*ms, false)},
			want: []Window{{Start: 200 * ms, End: 230 * ms, Attempts: 1, Affected: 1}, {Start: 300 * ms, End: 301 * ms, Open: true, Attempts: 1, Affected: 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Find(tc.rs)); diff != "" {
				t.Errorf("windows (-want +got):\n%s", diff)
			}
		})
	}
}

// reused marks r sent on a kept-alive connection.
func reused(r client.Record) client.Record { r.Reused = true; return r }

func TestAtAndClear(t *testing.T) {
	ws := []Window{{Start: 100 * ms, End: 200 * ms}, {Start: 500 * ms, End: 600 * ms}}
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{{50 * ms, -1}, {100 * ms, 0}, {150 * ms, 0}, {200 * ms, 0}, {300 * ms, -1}, {600 * ms, 1}, {700 * ms, -1}} {
		if got := At(ws, tc.at); got != tc.want {
			t.Errorf("At(%v) = %d, want %d", tc.at, got, tc.want)
		}
	}
	for _, tc := range []struct {
		from, to time.Duration
		want     bool
	}{{0, 99 * ms, true}, {0, 100 * ms, false}, {210 * ms, 490 * ms, true}, {150 * ms, 160 * ms, false},
		{300 * ms, 700 * ms, false}, {601 * ms, 900 * ms, true}, {0, 900 * ms, false}} {
		if got := Clear(ws, tc.from, tc.to); got != tc.want {
			t.Errorf("Clear(%v, %v) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
	if got := Total(ws); got != 200*ms {
		t.Errorf("Total = %v, want 200ms", got)
	}
}

func TestTracker(t *testing.T) {
	var tr Tracker
	if _, open := tr.Current(); open {
		t.Fatal("open before any record")
	}
	tr.Add(&client.Record{Status: 200, Sent: 0, End: 10 * ms})
	x1, x2 := rec("x", 100*ms, 101*ms, false), rec("x", 150*ms, 151*ms, false)
	tr.Add(&x1)
	tr.Add(&x2)
	w, open := tr.Current()
	if !open || w.Start != 100*ms || w.Attempts != 2 {
		t.Fatalf("current %+v open %v, want open since 100ms with 2 attempts", w, open)
	}
	early := rec("ok", 50*ms, 160*ms, false) // sent before the outage: proves nothing
	tr.Add(&early)
	if _, open := tr.Current(); !open {
		t.Fatal("closed by a request sent before the outage began")
	}
	stopping := reused(rec("503", 160*ms, 161*ms, false)) // a connection the stopping engine still held
	tr.Add(&stopping)
	if _, open := tr.Current(); !open {
		t.Fatal("closed by a 503 on a kept-alive connection")
	}
	late := rec("ok", 200*ms, 260*ms, false)
	tr.Add(&late)
	if _, open := tr.Current(); open || tr.Closed() != 1 {
		t.Fatalf("still open (closed %d) after a request sent after it reached the engine", tr.Closed())
	}
}
