package gates

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// world describes a synthetic run: n requests whose TTFT is log-normal
// around ttft (σ 0.25) and whose tokens stream every itl, all scaled by
// slow (1.3: a 30 % slower engine).
type world struct {
	seed   uint64
	n      int
	ttft   time.Duration
	itl    time.Duration
	slow   float64
	failed int  // the last failed requests fail with http_status
	open   bool // open loop: requests have an intended time and lag behind it
	// maxFailureRate is the run's declared report.validity.max_failure_rate
	// (0: the default).
	maxFailureRate float64
}

func (w world) records() []client.Record {
	rng := rand.New(rand.NewPCG(w.seed, 7))
	slow := w.slow
	if slow == 0 {
		slow = 1
	}
	jitter := func(d time.Duration, sigma float64) time.Duration {
		return time.Duration(float64(d) * slow * math.Exp(sigma*rng.NormFloat64()))
	}
	recs := make([]client.Record, w.n)
	for i := range recs {
		sent := time.Second + time.Duration(i)*10*time.Millisecond
		r := client.Record{ID: "r", Index: i, Phase: "main", Sent: sent, Wrote: sent + 50*time.Microsecond, Reused: true}
		if w.open {
			r.Intended = sent - time.Duration(rng.IntN(2000))*time.Microsecond
		}
		if i%10 == 0 {
			r.ConnectDur = time.Duration(200+rng.IntN(300)) * time.Microsecond
		}
		if i >= w.n-w.failed {
			r.ErrorClass, r.Status, r.End = client.ErrHTTPStatus, 503, r.Wrote+time.Millisecond
			recs[i] = r
			continue
		}
		r.FirstByte = r.Wrote + time.Millisecond
		at := r.Wrote + jitter(w.ttft, 0.25)
		r.FirstToken = at
		const tokens = 16
		for range tokens {
			r.Chunks = append(r.Chunks, client.Chunk{At: at, Tokens: 1})
			at += jitter(w.itl, 0.3)
		}
		r.End = r.Chunks[len(r.Chunks)-1].At + time.Millisecond
		r.PromptTokens, r.OutputTokens, r.TokenSource = 100, tokens, client.TokensFromUsage
		recs[i] = r
	}
	return recs
}

// run builds the Run the gates see: report.Compute's summary of the records
// (no /metrics view), and the records themselves.
func (w world) run(t testing.TB) Run {
	t.Helper()
	recs := w.records()
	end := recs[len(recs)-1].End
	meta := rundir.RunMeta{ID: "synthetic", Scenario: "world", MaxFailureRate: w.maxFailureRate,
		Phases: []rundir.PhaseMeta{{Name: "main", Measured: true, Start: time.Second, End: end}}}
	s := report.Compute(meta, append([]client.Record(nil), recs...), nil, nil, 0)
	return Run{Summary: s, Records: recs}
}

func mustParse(t testing.TB, exprs ...string) Gates {
	t.Helper()
	gs, err := ParseAll(exprs)
	if err != nil {
		t.Fatal(err)
	}
	return gs
}
