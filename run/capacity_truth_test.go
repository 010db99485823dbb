package run

import (
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/capacity"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/engine/sim/batch"
	"github.com/llmbench-org/llmbench/internal/interval"
	"github.com/llmbench-org/llmbench/rundir"
)

// modelProbe runs the built-in engine's performance model (package batch, in
// model time: no clock, no host) through one probe as the search sends it:
// constant arrivals at rate for dur, each of prompt tokens and output
// tokens, and tallies the requests against the objective the way the client
// would measure them (TTFT to the pass that emits the first token, TPOT over
// the rest, E2E to the last). It is the engine's ground truth for a probe:
// what a client without any delay of its own would find.
func modelProbe(t testing.TB, p sim.Params, prompt, output int, rate float64, dur time.Duration, slo rundir.SLO) capacity.Tally {
	t.Helper()
	s, err := batch.New(p)
	if err != nil {
		t.Fatal(err)
	}
	type req struct {
		q                  *batch.Seq
		arrive, first, end time.Duration
	}
	gap := time.Duration(float64(time.Second) / rate)
	var reqs []*req
	for at := time.Duration(0); at < dur; at += gap {
		reqs = append(reqs, &req{q: &batch.Seq{ID: "r", PromptLen: prompt, MaxTokens: output, IgnoreEOS: true}, arrive: at})
	}
	next, now := 0, time.Duration(0)
	by := map[*batch.Seq]*req{}
	for done := 0; done < len(reqs); {
		for next < len(reqs) && reqs[next].arrive <= now {
			by[reqs[next].q] = reqs[next]
			s.Add(reqs[next].q)
			next++
		}
		b := s.Schedule()
		if b == nil {
			now = reqs[next].arrive
			continue
		}
		now += b.Duration
		s.Complete(b)
		for _, q := range b.Seqs {
			r := by[q]
			if r.first == 0 && q.Output > 0 {
				r.first = now
			}
		}
		for _, q := range b.Finished {
			by[q].end = now
			done++
		}
	}
	var tl capacity.Tally
	for _, r := range reqs {
		ttft, e2e := r.first-r.arrive, r.end-r.arrive
		tpot := (r.end - r.first) / time.Duration(output-1)
		good := (slo.TTFT == 0 || ttft <= slo.TTFT) && (slo.TPOT == 0 || tpot <= slo.TPOT) && (slo.E2E == 0 || e2e <= slo.E2E)
		tl.Judged++
		if good {
			tl.Good++
		}
	}
	return tl
}

// modelCapacity is the engine's capacity under obj by a fine sweep of the
// model: the largest rate, on a grid 1 % apart from lo up, below which every
// rate's probe meets the target.
func modelCapacity(t testing.TB, p sim.Params, prompt, output int, dur time.Duration, obj capacity.Objective, lo, hi float64) float64 {
	t.Helper()
	last := 0.0
	for r := lo; r <= hi; r *= 1.01 {
		tl := modelProbe(t, p, prompt, output, r, dur, obj.SLO)
		if float64(tl.Good) < obj.Target*float64(tl.Judged) {
			return last
		}
		last = r
	}
	return last
}

// The model's probe is the model's: below its capacity every request is
// good, far above it few are; and the verdict of the full probe flips once.
func TestModelCapacity(t *testing.T) {
	sc, _, err := Load(writeScenario(t, searchScenario), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := simSettings(sc)
	obj := capacity.Objective{SLO: rundir.SLO{TTFT: sc.SLO.TTFT, TPOT: sc.SLO.TPOT}, Target: float64(sc.SLO.Target)}
	c := modelCapacity(t, p, 32, 16, searchProbe, obj, 2, 40)
	t.Logf("model capacity %.2f requests/s", c)
	if c <= 2 || c >= 40 {
		t.Fatalf("model capacity %.2f: not inside the search's range", c)
	}
	for _, f := range []float64{0.5, 0.85} {
		if tl := modelProbe(t, p, 32, 16, f*c, searchProbe, obj.SLO); tl.Good != tl.Judged {
			t.Errorf("%.2f× capacity: %d of %d good in the model, want all", f, tl.Good, tl.Judged)
		}
	}
	if tl := modelProbe(t, p, 32, 16, 1.3*c, searchProbe, obj.SLO); obj.Decide(tl, interval.Confidence).Verdict != interval.Fail {
		t.Errorf("1.3× capacity: %d of %d good in the model, want a fail", tl.Good, tl.Judged)
	}
}
