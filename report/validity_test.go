package report

import (
	"slices"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/validity"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// What the report gathers for the validity states from a run directory's
// raw data: an open loop's achieved rate against its schedule, and an
// engine's restarts from the scrapes between its phase boundaries.
func TestValidityFromRawData(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	openLoop := func(lagPerRequest time.Duration) []client.Record {
		var recs []client.Record
		for i := range 50 {
			due := time.Second + time.Duration(i)*100*ms // 10 requests/s planned
			sent := due + time.Duration(i)*lagPerRequest
			recs = append(recs, client.Record{ID: "r" + string(rune('A'+i)), Index: i, Phase: "main", Intended: due, Sent: sent, Wrote: sent,
				FirstToken: sent + 20*ms, End: sent + 50*ms, OutputTokens: 4, PromptTokens: 8, Status: 200, TokenSource: client.TokensFromUsage})
		}
		return recs
	}
	row := func(at time.Duration, finished float64) scrape.Row {
		return scrape.Row{Target: "http://e/metrics", At: at, OK: true, Snapshot: &scrape.Snapshot{Dialect: "vllm",
			Counters: map[scrape.Concept]float64{scrape.RequestsFinished: finished}}}
	}
	meta := func() rundir.RunMeta {
		return rundir.RunMeta{ID: "v", Ended: time.Now(), Phases: []rundir.PhaseMeta{{Name: "main", Measured: true, Start: time.Second, End: 7 * time.Second, Load: 10, LoadUnit: "requests/s"}}}
	}
	for _, tt := range []struct {
		name   string
		recs   []client.Record
		rows   []scrape.Row
		want   []string
		figure float64
	}{
		{"on schedule", openLoop(0), nil, nil, 0},
		{"a constant lag keeps the rate", func() []client.Record {
			rs := openLoop(0)
			for i := range rs {
				rs[i].Sent += 30 * ms
			}
			return rs
		}(), nil, nil, 0},
		// Each send 10 ms later than the one before: 49 gaps of 110 ms
		// where 100 were planned.
		{"falling behind", openLoop(10 * ms), nil, []string{validity.RateShort}, 100.0 / 110},
		{"counters that only grow", openLoop(0), []scrape.Row{row(2*time.Second, 10), row(3*time.Second, 20), row(4*time.Second, 30)}, nil, 0},
		{"counters back to zero twice", openLoop(0), []scrape.Row{row(2*time.Second, 10), row(3*time.Second, 2), row(4*time.Second, 9), row(5*time.Second, 1)},
			[]string{validity.EngineRestarted}, 2},
		{"a reset outside the measured phase is not this run's", openLoop(0), []scrape.Row{row(500*ms, 10), row(900*ms, 1), row(2*time.Second, 5)}, nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := Compute(meta(), tt.recs, tt.rows, nil, 0)
			var names []string
			for _, st := range s.Health.States {
				names = append(names, st.Name)
			}
			if !slices.Equal(names, tt.want) || s.Health.Valid != (len(tt.want) == 0) {
				t.Fatalf("states %+v, valid %v; want %v", s.Health.States, s.Health.Valid, tt.want)
			}
			if len(tt.want) > 0 {
				if got := s.Health.States[0].Figure; got < tt.figure-1e-9 || got > tt.figure+1e-9 {
					t.Errorf("figure %g, want %g", got, tt.figure)
				}
			}
		})
	}
}
