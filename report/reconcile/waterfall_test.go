package reconcile

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape/trace"
)

// checkAddsUp fails unless every request's phases are non-negative and add
// up to its E2E within the tolerance.
func checkAddsUp(t *testing.T, ws WaterfallSummary) {
	t.Helper()
	for _, w := range ws.PerRequest {
		var sum time.Duration
		for i, d := range w.Phases {
			if d < 0 {
				t.Errorf("%s: phase %s is negative: %v", w.ID, WaterfallPhases[i], d)
			}
			sum += d
		}
		if diff := sum - w.E2E; diff < 0 || diff > WaterfallTolerance || diff != w.Residual {
			t.Errorf("%s: phases add up to %v, E2E %v (residual %v, tolerance %v)", w.ID, sum, w.E2E, w.Residual, WaterfallTolerance)
		}
	}
}

func TestWaterfallJoinsEveryRequest(t *testing.T) {
	t.Parallel()
	w := newWorld("fastdeploy")
	w.build()
	ws := Waterfall(w.records, w.traces(0), w.origin)
	if ws.Requests != 100 || ws.Joined != 100 || ws.Unjoined != 0 || ws.Foreign != 0 {
		t.Fatalf("join: %d requests, %d joined, %d unjoined, %d foreign; want 100 all joined", ws.Requests, ws.Joined, ws.Unjoined, ws.Foreign)
	}
	if ws.ClockOffset != 0 || !ws.ClockConsistent || ws.WithinTolerance != 100 {
		t.Errorf("clock offset %v consistent %v, %d within tolerance", ws.ClockOffset, ws.ClockConsistent, ws.WithinTolerance)
	}
	checkAddsUp(t, ws)
	// The world's phases: 0.3 ms network, 0.5 ms preprocessing, 2 ms queue,
	// 10 ms prefill, 15 × 5 ms of decode after the first token; each engine
	// stamp is floored to the millisecond.
	want := map[string]float64{
		"send": 0.0003, "preprocess": 0.0005, "queue": 0.002, "prefill": 0.010,
		"first_token_delivery": 0.0003, "decode": 0.075, "finish": 0.0005,
	}
	for _, p := range ws.Phases {
		if math.Abs(p.Mean-want[p.Name]) > 0.001 {
			t.Errorf("phase %s: mean %v, want %v ± 1 ms", p.Name, p.Mean, want[p.Name])
		}
	}
	var sum float64
	for _, p := range ws.Phases {
		sum += p.Share
	}
	if math.Abs(sum-1) > 0.01 {
		t.Errorf("phase shares add up to %v, want 1", sum)
	}
}

// TestWaterfallAlignsClocks: an engine whose wall clock runs ahead of or
// behind the client's is shifted onto the client's clock, and its phases
// still add up.
func TestWaterfallAlignsClocks(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{50 * time.Millisecond, -50 * time.Millisecond, 3 * time.Second} {
		t.Run(skew.String(), func(t *testing.T) {
			t.Parallel()
			w := newWorld("fastdeploy")
			w.build()
			ws := Waterfall(w.records, w.traces(skew), w.origin)
			if !ws.ClockConsistent {
				t.Errorf("clocks judged inconsistent")
			}
			if got := time.Duration(ws.ClockOffset * 1e9); (got + skew).Abs() > 2*time.Millisecond {
				t.Errorf("clock offset %v, want about %v", got, -skew)
			}
			checkAddsUp(t, ws)
		})
	}
}

func TestWaterfallPartialTraces(t *testing.T) {
	t.Parallel()
	w := newWorld("fastdeploy")
	w.foreign = 5
	w.build()
	lost := map[string]bool{"chatcmpl-u0-3": true, "chatcmpl-u1-7": true, "chatcmpl-u2-1": true}
	events := slices.DeleteFunc(w.traces(0), func(e trace.Event) bool {
		return lost[e.RequestID] || strings.HasPrefix(e.Event, "PREPROCESSING")
	})
	ws := Waterfall(w.records, events, w.origin)
	if ws.Joined != 97 || ws.Unjoined != 3 || ws.Foreign != 5 {
		t.Fatalf("%d joined, %d unjoined, %d foreign; want 97, 3, 5", ws.Joined, ws.Unjoined, ws.Foreign)
	}
	checkAddsUp(t, ws)
	// Without PREPROCESSING_START the send phase has no end: its time goes
	// to the next phase, which REQUEST_QUEUE_START ends in place of
	// PREPROCESSING_END.
	for _, r := range ws.PerRequest {
		if r.Missing != 1 || r.Phases[0] != 0 || r.Phases[1] < 800*time.Microsecond-time.Millisecond {
			t.Fatalf("%s: %d missing milestones, phases %v; want 1, and send's time in preprocess", r.ID, r.Missing, r.Phases)
		}
	}
	f := traceJoinFinding(ws)
	if f.Severity != Warn || !strings.Contains(f.Verdict, "3 requests are missing from the trace") || !strings.Contains(f.Verdict, "5 requests llmbench did not send") {
		t.Errorf("finding: %s %s", f.Severity, f.Verdict)
	}
}

// TestWaterfallPreemption: a preempted request's inference ends at its last
// INFERENCE_END, and the preemption is counted.
func TestWaterfallPreemption(t *testing.T) {
	t.Parallel()
	origin := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return origin.Add(time.Duration(ms) * time.Millisecond) }
	rec := client.Record{ID: "r", ServerID: "chatcmpl-r", Sent: 10 * time.Millisecond, FirstToken: 31 * time.Millisecond, End: 101 * time.Millisecond}
	ev := func(name string, ms int) trace.Event {
		return trace.Event{RequestID: "chatcmpl-r", RawID: "chatcmpl-r_0", Event: name, Wall: at(ms)}
	}
	ws := Waterfall([]client.Record{rec}, []trace.Event{
		ev("PREPROCESSING_START", 11), ev("PREPROCESSING_END", 12), ev("INFERENCE_START", 15),
		ev("FIRST_TOKEN_GENERATED", 30), ev("PREEMPTED", 50), ev("RESCHEDULED_INFERENCE_START", 70),
		ev("INFERENCE_END", 60), ev("INFERENCE_END", 99), ev("POSTPROCESSING_END", 100),
	}, origin)
	if ws.Joined != 1 {
		t.Fatalf("not joined: %+v", ws)
	}
	got := ws.PerRequest[0]
	want := []time.Duration{1, 1, 3, 15, 1, 68, 2}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(got.Phases, want) || got.Preemptions != 1 || got.Residual != 0 {
		t.Errorf("phases %v preemptions %d residual %v; want %v, 1, 0", got.Phases, got.Preemptions, got.Residual, want)
	}
}

// TestWaterfallSmallConflict: client timestamps taken a wake-up late can
// leave the bounds on the clock offset contradicting each other by a
// fraction of a millisecond; within the tolerance that is agreement, and the
// trace join says nothing is wrong.
func TestWaterfallSmallConflict(t *testing.T) {
	t.Parallel()
	origin := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(us int) time.Time { return origin.Add(time.Duration(us) * time.Microsecond) }
	ms := time.Millisecond
	recs := []client.Record{
		// a's wire write was stamped late: the engine began 1.3 ms "before"
		// it (1 ms of that is the trace's resolution)…
		{ID: "a", Sent: 10 * ms, Wrote: 10 * ms, FirstToken: 20 * ms, End: 40 * ms},
		// … while b's first token was read 0.2 ms after the engine made it.
		{ID: "b", Sent: 10 * ms, Wrote: 10 * ms, FirstToken: 20 * ms, End: 40 * ms},
	}
	ev := func(id, name string, us int) trace.Event {
		return trace.Event{RequestID: id, Event: name, Wall: at(us)}
	}
	ws := Waterfall(recs, []trace.Event{
		ev("a", "PREPROCESSING_START", 8700), ev("a", "FIRST_TOKEN_GENERATED", 15000), ev("a", "INFERENCE_END", 35000),
		ev("b", "PREPROCESSING_START", 11000), ev("b", "FIRST_TOKEN_GENERATED", 19800), ev("b", "INFERENCE_END", 35000),
	}, origin)
	if c := time.Duration(ws.ClockConflict * 1e9); c != 100*time.Microsecond || !ws.ClockConsistent {
		t.Errorf("conflict %v, consistent %v: want 0.1 ms, within the tolerance", c, ws.ClockConsistent)
	}
	if f := traceJoinFinding(ws); f.Severity != Info {
		t.Errorf("a 0.1 ms disagreement warns: %s", f.Verdict)
	}
}

// TestWaterfallResidual: an engine event after the client read the end (a
// clock that cannot be reconciled) shows as a residual, never as a
// negative phase.
func TestWaterfallResidual(t *testing.T) {
	t.Parallel()
	origin := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return origin.Add(time.Duration(ms) * time.Millisecond) }
	recs := []client.Record{
		{ID: "a", Sent: 10 * time.Millisecond, FirstToken: 20 * time.Millisecond, End: 40 * time.Millisecond, ErrorClass: client.ErrNone},
		{ID: "b", Sent: 10 * time.Millisecond, FirstToken: 20 * time.Millisecond, End: 40 * time.Millisecond},
	}
	ev := func(id, name string, ms int) trace.Event {
		return trace.Event{RequestID: id, Event: name, Wall: at(ms)}
	}
	ws := Waterfall(recs, []trace.Event{
		// a: the engine started before the client sent (needs a shift of ≥ +5 ms) …
		ev("a", "PREPROCESSING_START", 4), ev("a", "FIRST_TOKEN_GENERATED", 15), ev("a", "INFERENCE_END", 30),
		// … b: finished after the client read the end (needs ≤ −10 ms).
		ev("b", "PREPROCESSING_START", 11), ev("b", "FIRST_TOKEN_GENERATED", 18), ev("b", "INFERENCE_END", 50),
	}, origin)
	if ws.ClockConsistent {
		t.Errorf("contradictory bounds judged consistent (offset %v)", ws.ClockOffset)
	}
	if ws.ResidualMax <= 0 {
		t.Errorf("no residual reported: %+v", ws.PerRequest)
	}
	for _, w := range ws.PerRequest {
		for _, d := range w.Phases {
			if d < 0 {
				t.Errorf("%s: negative phase %v", w.ID, w.Phases)
			}
		}
	}
	if f := traceJoinFinding(ws); f.Severity != Warn || !strings.Contains(f.Verdict, "clock") {
		t.Errorf("finding: %s %s", f.Severity, f.Verdict)
	}
}

// TestReconcileWithTraces: traces in the Input add the join finding.
func TestReconcileWithTraces(t *testing.T) {
	t.Parallel()
	w := newWorld("fastdeploy")
	in := w.input()
	in.Traces = w.traces(0)
	in.Origin = time.Time{} // estimated from the rows
	fs := Reconcile(in)
	f := only(t, fs, IDTraceJoin)
	if f.Severity != Info || !strings.Contains(f.Verdict, "joined 100 of 100 requests") {
		t.Errorf("trace join: %s %s", f.Severity, f.Verdict)
	}
	if Worst(fs) != Info {
		t.Errorf("clean run with traces has warnings:\n%s", dump(fs))
	}
}

// FuzzWaterfall: whatever the times, no phase is negative and the phases
// add up to E2E plus the residual.
func FuzzWaterfall(f *testing.F) {
	f.Add(int64(10), int64(20), int64(40), int64(11), int64(12), int64(15), int64(18), int64(35), int64(0))
	f.Add(int64(10), int64(20), int64(40), int64(4), int64(2), int64(50), int64(1), int64(90), int64(-7))
	f.Fuzz(func(t *testing.T, sent, first, end, pre, preEnd, inf, tok, infEnd, skew int64) {
		ms := func(v int64) time.Duration { return time.Duration(v%1_000_000) * time.Millisecond }
		if ms(sent) < 0 || ms(end) < ms(sent) || ms(first) < ms(sent) || ms(first) > ms(end) || ms(first) <= 0 {
			return
		}
		origin := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		rec := client.Record{ID: "x", Sent: ms(sent), FirstToken: ms(first), End: ms(end)}
		var evs []trace.Event
		for name, v := range map[string]int64{"PREPROCESSING_START": pre, "PREPROCESSING_END": preEnd, "INFERENCE_START": inf, "FIRST_TOKEN_GENERATED": tok, "INFERENCE_END": infEnd} {
			evs = append(evs, trace.Event{RequestID: "x", RawID: "x_0", Event: name, Wall: origin.Add(ms(v) + ms(skew))})
		}
		ws := Waterfall([]client.Record{rec}, evs, origin)
		if ws.Joined != 1 {
			t.Fatalf("not joined")
		}
		w := ws.PerRequest[0]
		var sum time.Duration
		for _, d := range w.Phases {
			if d < 0 {
				t.Fatalf("negative phase: %v", w.Phases)
			}
			sum += d
		}
		if w.Residual < 0 || sum != w.E2E+w.Residual {
			t.Fatalf("phases %v sum %v, E2E %v, residual %v", w.Phases, sum, w.E2E, w.Residual)
		}
	})
}
