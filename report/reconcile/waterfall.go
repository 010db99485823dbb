package reconcile

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/quantile"
	"github.com/llmbench-org/llmbench/scrape/trace"
)

// WaterfallPhases names a request's phases in order. Each runs from one
// milestone to the next, so together they span the client's E2E:
//
//	send                  client send → the engine starts preprocessing (PREPROCESSING_START)
//	preprocess            → PREPROCESSING_END (tokenization, templating)
//	queue                 → INFERENCE_START (waiting queue, resource allocation)
//	prefill               → FIRST_TOKEN_GENERATED
//	first_token_delivery  → the client reads the first token (postprocessing, SSE, network)
//	decode                → INFERENCE_END (the last token generated)
//	finish                → the client reads the end of the stream
var WaterfallPhases = []string{"send", "preprocess", "queue", "prefill", "first_token_delivery", "decode", "finish"}

// traceResolution is the precision of a trace timestamp: FastDeploy logs
// integer epoch milliseconds, so an event happened up to 1 ms after its stamp.
const traceResolution = time.Millisecond

// WaterfallTolerance bounds |Σ phases − E2E| for a request whose trace is
// consistent with the client's clock. The phases telescope, so they add up to
// E2E exactly unless an engine event, once aligned, falls after the client
// read the end; with one host's clocks that overrun is at most the trace's
// rounding at each of the two boundaries the engine's events share with the
// client (2 × 1 ms).
const WaterfallTolerance = 2 * traceResolution

// milestone i is where phase i-1 ends and phase i starts; the engine's
// milestones list the events that stand for them, the preferred first.
var (
	evPreStart   = []string{trace.PreprocessingStart}
	evPreEnd     = []string{trace.PreprocessingEnd, trace.QueueStart}
	evInfStart   = []string{trace.InferenceStart, "RESOURCE_ALLOCATE_END", trace.QueueEnd}
	evFirstToken = []string{trace.FirstToken, trace.DecodeStart}
	evInfEnd     = []string{trace.InferenceEnd, "DECODE_INFERENCE_END", trace.PostprocessingStart}
)

// RequestWaterfall is one request's phases (in WaterfallPhases order).
type RequestWaterfall struct {
	ID          string          `json:"id"`
	E2E         time.Duration   `json:"e2e_ns"`
	Phases      []time.Duration `json:"phases_ns"`
	Residual    time.Duration   `json:"residual_ns"`           // Σ Phases − E2E, never negative
	Missing     int             `json:"missing,omitempty"`     // milestones absent from the trace: their time is in the next phase
	Preemptions int             `json:"preemptions,omitempty"` // PREEMPTED events
}

// PhaseStat summarises one phase over the joined requests, in seconds.
type PhaseStat struct {
	Name  string  `json:"name"`
	Mean  float64 `json:"mean_s"`
	P50   float64 `json:"p50_s"`
	P90   float64 `json:"p90_s"`
	P99   float64 `json:"p99_s"`
	Share float64 `json:"share"` // of the mean E2E
}

// WaterfallSummary is the waterfall of a run: every completed client request
// joined to the engine's trace by request id, and the phases aggregated.
type WaterfallSummary struct {
	Requests int `json:"requests"` // the client's completed requests that had a first token
	Joined   int `json:"joined"`   // of those, found in the trace with at least one milestone
	Unjoined int `json:"unjoined"`
	// Foreign counts request ids in the trace that match no client record:
	// requests llmbench did not send.
	Foreign int `json:"foreign_requests"`
	// Probes counts llmbench's own calibration probes in the trace (ids
	// beginning client.ProbeIDPrefix), sent before the measured phase.
	Probes int `json:"probe_requests,omitempty"`
	// ClockOffset is added to the engine's times to put them on the client's
	// clock: 0 when the two are consistent, otherwise the smallest shift that
	// puts every engine event inside its request's client span.
	ClockOffset float64 `json:"clock_offset_s"`
	// ClockConflict is by how much no single offset fits every request (0
	// when one does): the two clocks' disagreement, which timestamps taken a
	// scheduler wake-up late make a fraction of a millisecond on a busy machine.
	ClockConflict   float64     `json:"clock_conflict_s"`
	ClockConsistent bool        `json:"clock_consistent"` // the conflict is within Tolerance
	Tolerance       float64     `json:"tolerance_s"`      // WaterfallTolerance
	WithinTolerance int         `json:"within_tolerance"` // joined requests whose phases add up to their E2E within Tolerance
	ResidualMax     float64     `json:"residual_max_s"`
	E2E             PhaseStat   `json:"e2e"`
	Phases          []PhaseStat `json:"phases"`

	// PerRequest is every joined request's waterfall, in record order. It is
	// kept out of summary.json (one line per request belongs in its own file).
	PerRequest []RequestWaterfall `json:"-"`
}

// traced is what the trace says of one request: the time of each engine
// milestone (per list in milestoneEvents), on the wall clock.
type traced struct {
	at          [5]time.Time
	has         [5]bool
	rank        [5]int // index in milestoneEvents of the event that set at
	preemptions int
}

var milestoneEvents = [5][]string{evPreStart, evPreEnd, evInfStart, evFirstToken, evInfEnd}

// Waterfall joins trace events to client records by request id and builds
// each completed request's phase waterfall and their aggregate. origin is
// the wall-clock time of the run clock's zero. The engine's id (without
// FastDeploy's "_N" choice suffix, as package trace gives it) is matched
// against the id the server echoed and the one the client sent, with or
// without FastDeploy's "chatcmpl-" prefix.
func Waterfall(records []client.Record, events []trace.Event, origin time.Time) WaterfallSummary {
	ws := WaterfallSummary{Tolerance: WaterfallTolerance.Seconds(), ClockConsistent: true}

	byID := map[string]int{} // any id form → record index
	for i := range records {
		r := &records[i]
		for _, id := range []string{r.ServerID, r.ID, "chatcmpl-" + r.ID} {
			if id == "" {
				continue
			}
			if _, dup := byID[id]; !dup {
				byID[id] = i
			}
		}
	}
	traces := map[int]*traced{}
	foreign, probes := map[string]bool{}, map[string]bool{}
	for _, ev := range events {
		id := ev.RequestID
		if id == "" {
			id = trace.StripChoice(ev.RawID)
		}
		i, ok := byID[id]
		if !ok {
			i, ok = byID[strings.TrimPrefix(id, "chatcmpl-")]
		}
		if !ok {
			if strings.HasPrefix(id, client.ProbeIDPrefix) || strings.HasPrefix(strings.TrimPrefix(id, "chatcmpl-"), client.ProbeIDPrefix) {
				probes[id] = true // llmbench's own, before the run: not foreign
				continue
			}
			foreign[id] = true
			continue
		}
		t := traces[i]
		if t == nil {
			t = &traced{}
			traces[i] = t
		}
		t.add(ev)
	}
	ws.Foreign, ws.Probes = len(foreign), len(probes)

	// The requests to draw: completed, with a first token.
	var idx []int
	for i := range records {
		if records[i].OK() && records[i].FirstToken > 0 {
			idx = append(idx, i)
		}
	}
	ws.Requests = len(idx)
	var joined []int
	for _, i := range idx {
		if traces[i] != nil {
			joined = append(joined, i)
		}
	}
	ws.Joined, ws.Unjoined = len(joined), len(idx)-len(joined)
	if len(joined) == 0 {
		return ws
	}

	offset, conflict := clockOffset(records, traces, joined, origin)
	ws.ClockOffset, ws.ClockConflict = offset.Seconds(), conflict.Seconds()
	ws.ClockConsistent = conflict <= WaterfallTolerance
	perPhase := make([][]float64, len(WaterfallPhases))
	var e2es []float64
	for _, i := range joined {
		w := drawRequest(&records[i], traces[i], origin, offset)
		ws.PerRequest = append(ws.PerRequest, w)
		for p, d := range w.Phases {
			perPhase[p] = append(perPhase[p], d.Seconds())
		}
		e2es = append(e2es, w.E2E.Seconds())
		ws.ResidualMax = math.Max(ws.ResidualMax, w.Residual.Seconds())
		if w.Residual <= WaterfallTolerance {
			ws.WithinTolerance++
		}
	}
	ws.E2E = phaseStat("e2e", e2es, 0)
	meanE2E := ws.E2E.Mean
	for p, name := range WaterfallPhases {
		ws.Phases = append(ws.Phases, phaseStat(name, perPhase[p], meanE2E))
	}
	return ws
}

func (t *traced) add(ev trace.Event) {
	if ev.Event == trace.Preempted {
		t.preemptions++
		return
	}
	for m, names := range milestoneEvents {
		rank := slices.Index(names, ev.Event)
		if rank < 0 {
			continue
		}
		// The preferred event wins over its stand-ins; among equals the
		// first occurrence marks a start, and the last the end of inference
		// (a preempted request is rescheduled and finishes later).
		last := m == len(milestoneEvents)-1
		switch {
		case !t.has[m] || rank < t.rank[m]:
			t.at[m], t.has[m], t.rank[m] = ev.Wall, true, rank
		case rank > t.rank[m]:
		case last && ev.Wall.After(t.at[m]):
			t.at[m] = ev.Wall
		case !last && ev.Wall.Before(t.at[m]):
			t.at[m] = ev.Wall
		}
	}
}

// clockOffset finds the shift of the engine's times onto the client's run
// clock. Each request bounds it: the engine cannot start before the client
// sent (its stamp floors the true time by up to traceResolution), nor make
// the first token after the client read it, nor finish inference after the
// client read the end. When 0 satisfies every bound the clocks agree;
// otherwise the nearest bound is taken, and when the bounds contradict
// each other (clock steps, jitter, a client timestamp taken a wake-up late)
// their midpoint, with by how much they contradict (conflict, else 0).
func clockOffset(records []client.Record, traces map[int]*traced, joined []int, origin time.Time) (offset, conflict time.Duration) {
	lo, hi := time.Duration(math.MinInt64), time.Duration(math.MaxInt64)
	for _, i := range joined {
		r, t := &records[i], traces[i]
		if t.has[0] {
			lo = max(lo, r.SentOnWire()-(t.at[0].Sub(origin)+traceResolution))
		}
		if t.has[3] {
			hi = min(hi, r.FirstToken-t.at[3].Sub(origin))
		}
		if t.has[4] {
			hi = min(hi, r.End-t.at[4].Sub(origin))
		}
	}
	switch {
	case lo > hi:
		return lo/2 + hi/2, lo - hi
	case lo > 0:
		return lo, 0
	case hi < 0 && hi != time.Duration(math.MaxInt64):
		return hi, 0
	}
	return 0, 0
}

// drawRequest lays one request's milestones on the client's clock and cuts
// its E2E into phases. Milestones are kept in order (one earlier than its
// predecessor is moved up to it), so no phase is negative; the phases then
// add up to E2E plus the overrun of the last engine milestone past the
// client's end, which is the residual.
func drawRequest(r *client.Record, t *traced, origin time.Time, offset time.Duration) RequestWaterfall {
	w := RequestWaterfall{ID: r.ID, E2E: r.E2E(), Phases: make([]time.Duration, len(WaterfallPhases)), Preemptions: t.preemptions}
	// points: send, 5 engine milestones interleaved with the client's first
	// token after the engine's, and the client's end.
	type point struct {
		at  time.Duration
		has bool
	}
	engine := func(m int) point {
		if !t.has[m] {
			return point{}
		}
		return point{t.at[m].Sub(origin) + offset, true}
	}
	pts := []point{
		{r.SentOnWire(), true}, engine(0), engine(1), engine(2), engine(3),
		{r.FirstToken, true}, engine(4), {r.End, true},
	}
	prev := r.SentOnWire()
	phase := 0
	for _, p := range pts[1:] {
		if !p.has {
			w.Missing++
			phase++
			continue
		}
		at := max(p.at, prev)
		w.Phases[phase] += at - prev
		prev = at
		phase++
	}
	var sum time.Duration
	for _, d := range w.Phases {
		sum += d
	}
	w.Residual = max(0, sum-w.E2E)
	return w
}

// phaseStat summarises xs (seconds); share is relative to total when it is positive.
func phaseStat(name string, xs []float64, total float64) PhaseStat {
	ps := PhaseStat{Name: name}
	if len(xs) == 0 {
		return ps
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	ps.Mean = stat.Mean(s, nil)
	ps.P50 = quantile.OfSorted(0.5, s)
	ps.P90 = quantile.OfSorted(0.9, s)
	ps.P99 = quantile.OfSorted(0.99, s)
	if total > 0 {
		ps.Share = ps.Mean / total
	}
	return ps
}

// traceJoinFinding states how well the trace joined the client's records,
// and the mean waterfall.
func traceJoinFinding(ws WaterfallSummary) Finding {
	f := Finding{ID: IDTraceJoin, Severity: Info}
	ev := evidence{}
	ev.set("requests", float64(ws.Requests))
	ev.set("joined", float64(ws.Joined))
	ev.set("foreign_requests", float64(ws.Foreign))
	ev.set("clock_offset_s", ws.ClockOffset)
	ev.set("residual_max_s", ws.ResidualMax)
	ev.set("clock_conflict_s", ws.ClockConflict)
	for _, p := range ws.Phases {
		ev.set(p.Name+"_mean_s", p.Mean)
	}
	f.Evidence = ev.orNil()
	if ws.Joined == 0 {
		f.Severity = Warn
		f.Verdict = fmt.Sprintf("none of the client's %d completed requests appears in the engine's trace (%d other request ids do): is the trace from this run and this engine?", ws.Requests, ws.Foreign)
		return f
	}
	var parts []string
	for _, p := range ws.Phases {
		parts = append(parts, fmt.Sprintf("%s %s", strings.ReplaceAll(p.Name, "_", " "), dur(p.Mean)))
	}
	f.Verdict = fmt.Sprintf("joined %d of %d requests to the engine's trace; mean E2E %s = %s", ws.Joined, ws.Requests, dur(ws.E2E.Mean), strings.Join(parts, " + "))
	var problems []string
	if ws.Unjoined > 0 {
		problems = append(problems, fmt.Sprintf("%d requests are missing from the trace", ws.Unjoined))
	}
	if over := ws.Joined - ws.WithinTolerance; over > 0 || !ws.ClockConsistent {
		problems = append(problems, fmt.Sprintf("the engine's clock and the client's disagree by %s: %d requests' phases overrun their E2E by more than %s (up to %s)",
			dur(ws.ClockConflict), over, dur(ws.Tolerance), dur(ws.ResidualMax)))
	}
	if ws.Foreign > 0 {
		clause := fmt.Sprintf("the trace holds %d requests llmbench did not send", ws.Foreign)
		if float64(ws.Foreign) >= foreignShareWarn*float64(max(1, ws.Requests)) {
			problems = append(problems, clause)
		} else {
			f.Verdict = joinClauses(f.Verdict, clause)
		}
	}
	if ws.ClockOffset != 0 {
		f.Verdict = joinClauses(f.Verdict, fmt.Sprintf("engine times shifted by %s to fit the client's clock", signedDur(ws.ClockOffset)))
	}
	if len(problems) > 0 {
		f.Severity = Warn
		f.Verdict = joinClauses(append([]string{f.Verdict}, problems...)...)
	}
	return f
}
