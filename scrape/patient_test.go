package scrape

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestPatientTimeouts: a window's snapshot waits at least the patient
// timeout; a longer one, and a target that sets none (DefaultTimeout), keep
// theirs; the original targets are not changed; a source that cannot be
// given a timeout, and no source, stay what they are.
func TestPatientTimeouts(t *testing.T) {
	t.Parallel()
	ts := Targets{
		{URL: "a", Timeout: 100 * time.Millisecond},
		{URL: "b", Timeout: 30 * time.Second},
		{URL: "c"},
		{URL: "d", Timeout: SnapshotTimeout},
	}
	got, ok := Patient(ts, SnapshotTimeout).(Targets)
	if !ok || len(got) != len(ts) {
		t.Fatalf("Patient(Targets) = %#v", Patient(ts, SnapshotTimeout))
	}
	for i, want := range []time.Duration{SnapshotTimeout, 30 * time.Second, 0, SnapshotTimeout} {
		if got[i].Timeout != want || got[i].URL != ts[i].URL {
			t.Errorf("target %s: timeout %v, want %v", got[i].URL, got[i].Timeout, want)
		}
	}
	if ts[0].Timeout != 100*time.Millisecond {
		t.Errorf("the periodic targets changed: %v", ts[0].Timeout)
	}
	if Patient(nil, SnapshotTimeout) != nil {
		t.Error("no source became one")
	}
	var other Source = rowsSource{}
	if _, same := Patient(other, SnapshotTimeout).(rowsSource); !same {
		t.Error("a source without Patient changed")
	}
}

// rowsSource is a Source that cannot be given a timeout.
type rowsSource struct{}

func (rowsSource) ScrapeRows(context.Context, time.Time) []Row { return nil }

// TestPatientSnapshotOfASlowAnswer: a target that answers after longer than
// the periodic timeout, as a healthy engine's answer does to a scraper the
// host keeps off the CPU, fails the periodic scrape and is read by the
// patient one.
func TestPatientSnapshotOfASlowAnswer(t *testing.T) {
	t.Parallel()
	body := fixture(t, "sglang.txt")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(300 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", ctText)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	periodic := Targets{{URL: srv.URL, Dialect: "sglang", Timeout: 50 * time.Millisecond}}
	if rows := periodic.ScrapeRows(context.Background(), time.Now()); len(rows) != 1 || rows[0].OK || !strings.Contains(rows[0].Error, "timed out after 50ms") {
		t.Fatalf("periodic scrape: %+v, want a timeout", rows)
	}
	rows := Patient(periodic, SnapshotTimeout).ScrapeRows(context.Background(), time.Now())
	if len(rows) != 1 || !rows[0].OK || rows[0].Snapshot.Counters[RequestsFinished] != 320 {
		t.Fatalf("patient scrape: %+v, want the answer", rows)
	}
}
