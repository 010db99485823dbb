package workload

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A phase that runs until decided ends once Decided says so, never in its
// first quarter, and its limits still bound it when the verdict never comes.
func TestUntilDecidedEndsThePhase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		decidedAt time.Duration // Decided says yes from then on (0: never)
		wantEnd   time.Duration // arrivals end
	}{
		{"decided at once: not before a quarter", time.Millisecond, 2500 * time.Millisecond},
		{"decided later", 4100 * time.Millisecond, 4250 * time.Millisecond},
		{"never decided: the duration ends it", 0, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := plan(t, "name: u\nengine: {kind: sim}\nworkload: {rate: 20, arrival: constant, duration: 10s, until: decided}\nslo: {ttft: 1s}\n")
				if ph := p.Phases()[0]; !ph.UntilDecided {
					t.Fatalf("phase %+v: want UntilDecided", ph)
				}
				start := time.Now()
				rec := &recorder{start: start, work: func(Request) time.Duration { return 50 * time.Millisecond }}
				var asked atomic.Int64
				d := &Driver{Plan: p, Sender: rec, Start: start, Decided: func(phase string) bool {
					asked.Add(1)
					if phase != "main" {
						t.Errorf("asked about %q", phase)
					}
					return tc.decidedAt > 0 && time.Since(start) >= tc.decidedAt
				}}
				res, err := d.Run(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Phases[0].ArrivalsEnd; got != tc.wantEnd {
					t.Errorf("arrivals ended at %v, want %v (asked %d times)", got, tc.wantEnd, asked.Load())
				}
				if want := int(tc.wantEnd.Seconds()*20 + 0.5); abs(res.Phases[0].Sent-want) > 1 {
					t.Errorf("sent %d, want about %d", res.Phases[0].Sent, want)
				}
			})
		})
	}
}

func abs(x int) int { return max(x, -x) }

// Next adds phases after the plan's, each once the last has drained, and
// the search's probes are named and loaded as asked.
func TestNextRunsProbes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := plan(t, `name: s
engine: {kind: sim}
workload:
  search: {over: rate, min: 2, max: 32}
  arrival: constant
  requests: 10
  warmup: {requests: 3}
slo: {ttft: 1s}
`)
		if got := len(p.Phases()); got != 1 || p.Phases()[0].Name != "warmup" || p.Phases()[0].Rate != 2 {
			t.Fatalf("plan phases %+v: want the warmup alone, at the search's smallest rate", p.Phases())
		}
		start := time.Now()
		var inflight atomic.Int64
		rec := &recorder{start: start, work: func(Request) time.Duration { return 300 * time.Millisecond }}
		loads := []float64{8, 4.5}
		var seen [][]PhaseResult
		d := &Driver{Plan: p, Sender: rec, Start: start,
			OnPhase: func(_ context.Context, ev PhaseEvent) {
				if ev.Kind == PhaseStart && rec.inflight.Load() != 0 {
					t.Errorf("%s started with %d requests of the last phase in flight", ev.Phase, rec.inflight.Load())
				}
				inflight.Store(rec.inflight.Load())
			},
			Next: func(done []PhaseResult) (Phase, bool) {
				seen = append(seen, done)
				if len(loads) == 0 {
					return Phase{}, false
				}
				ph, err := p.Probe(loads[0], len(seen))
				if err != nil {
					t.Fatal(err)
				}
				loads = loads[1:]
				return ph, true
			}}
		res, err := d.Run(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, ph := range res.Phases {
			names = append(names, ph.Name)
		}
		want := []string{"warmup", "search-rate-8", "search-rate-4.5-r2"}
		if len(names) != 3 || names[1] != want[1] || names[2] != want[2] {
			t.Fatalf("phases %v, want %v", names, want)
		}
		if r := res.Phases[1]; r.Rate != 8 || r.Sent != 10 || !r.Measured || r.Sweep != SweepSearch {
			t.Errorf("first probe %+v: want 10 requests at 8/s, measured", r)
		}
		if r := res.Phases[2]; r.Sent != 20 {
			t.Errorf("re-probe sent %d, want twice the 10", r.Sent)
		}
		if len(seen) != 3 || len(seen[0]) != 1 || len(seen[2]) != 3 || seen[2][1].OK != 10 {
			t.Errorf("Next saw %v: want the drained phases so far each time", seen)
		}
	})
}

func TestSearchIsNotSharded(t *testing.T) {
	t.Parallel()
	p := plan(t, "name: s\nengine: {kind: sim}\nworkload: {search: {over: rate, min: 1, max: 8}, requests: 10}\nslo: {ttft: 1s}\n")
	if _, err := p.Shard(0, 2); err == nil {
		t.Error("a search was sharded")
	}
	if q, err := p.Shard(0, 1); err != nil || q != p {
		t.Errorf("shard 0/1: %v", err)
	}
}
