package reconcile

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// conns builds n sequential records of one closed-loop user (one in flight
// at a time); shape edits record i.
func conns(n int, shape func(i int, r *client.Record)) []client.Record {
	out := make([]client.Record, n)
	for i := range out {
		at := time.Duration(i+1) * 100 * time.Millisecond
		out[i] = client.Record{ID: fmt.Sprint(i), Sent: at, Wrote: at + time.Millisecond, End: at + 90*time.Millisecond, Status: 200,
			Reused: i > 0}
		if !out[i].Reused {
			out[i].Connected = at + time.Millisecond
		}
		if shape != nil {
			shape(i, &out[i])
		}
	}
	return out
}

// newConn marks a record as sent on a connection opened for it.
func newConn(r *client.Record) { r.Reused, r.Connected = false, r.Sent+time.Millisecond }

// Each way an engine closes connections, as the client records it, is named
// as that way and no other; connections kept give no finding.
func TestConnectionCloses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		records []client.Record
		want    string // the evidence key naming the kind ("" = no finding)
		others  []string
		sev     Severity
		says    string
	}{
		{name: "kept alive", records: conns(20, nil)},
		{name: "Connection: close on every response", records: conns(20, func(_ int, r *client.Record) { newConn(r); r.ConnClose = true }),
			want: "close_every_response", sev: Info, says: "after every response and says so"},
		{name: "Connection: close every 4th (keep-alive max 4)", records: conns(20, func(i int, r *client.Record) {
			r.ConnClose = i%4 == 3
			if i%4 == 0 {
				newConn(r)
			}
		}), want: "close_keep_alive_max", sev: Info, says: "after about every 4 requests"},
		{name: "closed at once after each stream, some reuses caught", records: conns(20, func(i int, r *client.Record) {
			newConn(r)
			if i%3 == 1 {
				r.Retries, r.RetryIdle = 1, 40*time.Microsecond
			}
		}), want: "close_after_stream", sev: Info, says: "right after a response without saying so"},
		{name: "closed at once after each stream, no reuse caught", records: conns(20, func(_ int, r *client.Record) { newConn(r) }),
			want: "close_after_stream", sev: Info, says: "right after a response without saying so"},
		{name: "closed after 5 s idle", records: conns(20, func(i int, r *client.Record) {
			if i == 7 || i == 15 {
				newConn(r)
				r.Retries, r.RetryIdle = 1, 5*time.Second
			}
		}), want: "close_idle", sev: Info, says: "closed for sitting idle past its keep-alive timeout (idle up to 5.00 s)"},
		{name: "resends spent on dead connections", records: conns(20, func(i int, r *client.Record) {
			if i == 7 {
				r.Retries, r.RetryIdle = 3, 5*time.Second
				r.ErrorClass, r.Status = client.ErrConnect, 0
			}
		}), want: "close_idle", sev: Warn, says: "1 requests failed on dead connections"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := connections(tc.records)
			if tc.want == "" {
				if ok {
					t.Fatalf("connections kept, yet: %s %v", f.Verdict, f.Evidence)
				}
				return
			}
			if !ok {
				t.Fatal("no finding")
			}
			if f.Evidence[tc.want] == 0 || f.Severity != tc.sev || !strings.Contains(f.Verdict, tc.says) {
				t.Errorf("%s %q %v: want %s, %s, saying %q", f.Severity, f.Verdict, f.Evidence, tc.want, tc.sev, tc.says)
			}
			for _, k := range []string{"close_every_response", "close_keep_alive_max", "close_after_stream", "close_idle", "closed_unannounced"} {
				if k != tc.want && f.Evidence[k] != 0 {
					t.Errorf("named %s too: %s %v", k, f.Verdict, f.Evidence)
				}
			}
		})
	}
}
