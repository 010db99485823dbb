package capacity

import (
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/interval"
	"github.com/llmbench-org/llmbench/rundir"
)

func TestDecide(t *testing.T) {
	o := Objective{Target: 0.9}
	for _, tc := range []struct {
		good, judged int
		want         interval.Verdict
	}{
		{0, 0, interval.Inconclusive},
		{35, 35, interval.Pass},         // Wilson lower bound 0.901
		{34, 34, interval.Inconclusive}, // 0.898
		{90, 100, interval.Inconclusive},
		{190, 200, interval.Pass},
		{70, 100, interval.Fail},
		{0, 5, interval.Fail},
	} {
		d := o.Decide(Tally{Good: tc.good, Judged: tc.judged}, interval.Confidence)
		if d.Verdict != tc.want {
			t.Errorf("%d of %d good, target 90%%: %s, want %s", tc.good, tc.judged, d, tc.want)
		}
	}
	if d := (Objective{}).Decide(Tally{Good: 380, Judged: 380}, interval.Confidence); d.Target != DefaultTarget || d.Verdict != interval.Inconclusive {
		t.Errorf("default target: %s, want 99%% and inconclusive at 380 of 380", d)
	}
	if d := (Objective{}).Decide(Tally{Good: 381, Judged: 381}, interval.Confidence); d.Verdict != interval.Pass {
		t.Errorf("381 of 381 at 99%%: %s, want pass", d)
	}
}

func TestTally(t *testing.T) {
	slo := rundir.SLO{E2E: 100 * time.Millisecond}
	var tl Tally
	ok := client.Record{Sent: 0, End: 50 * time.Millisecond}
	slow := client.Record{Sent: 0, End: 150 * time.Millisecond}
	failed := client.Record{ErrorClass: client.ErrHTTPStatus, End: time.Millisecond}
	canceled := client.Record{ErrorClass: client.ErrCanceled, End: time.Millisecond}
	for _, r := range []client.Record{ok, slow, failed, canceled, ok} {
		tl.Add(slo, &r)
	}
	if tl != (Tally{Judged: 4, Good: 2}) {
		t.Errorf("tally %+v, want 4 judged (the cancelled one left out), 2 good", tl)
	}
}
