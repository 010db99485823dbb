package reconcile

import (
	"slices"
	"sort"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
	"github.com/llmbench-org/llmbench/scrape"
)

// edgeSlack widens a snapshot's reading time when deciding which client
// records it may or may not have counted: an engine counts a request when it
// processes the last token, a little before the client reads the end of the
// stream (one flush and one network hop; well under 10 ms on the links a
// benchmark client sits on).
const edgeSlack = 10 * time.Millisecond

// pairedWindow is a measured window whose two snapshots both succeeded.
type pairedWindow struct {
	Window
	delta scrape.Snapshot
}

// analysis holds what every check reads, computed once.
type analysis struct {
	in  Input
	sem semantics

	windows  []pairedWindow
	unpaired []Window // measured windows lacking a usable snapshot

	server      scrape.Snapshot  // deltas summed over the paired windows
	resets      []scrape.Concept // counters/histograms that reset inside a paired window
	resetEvents []scrape.Reset   // each reset, when and on which target
	// restartGaps are, for each concept that reset, the spans from the
	// last scrape before a reset to the end of the first that saw it: what
	// the engine counted in them before it restarted is lost to the delta.
	restartGaps map[scrape.Concept][]span
	// records are those the paired windows cover (client's view).
	records      []*client.Record
	invalid      map[scrape.Concept]string // concepts exposed but unusable in a paired window, with why
	mixedBounds  []scrape.Concept          // histograms whose buckets changed between windows (left out)
	span         time.Duration             // the paired windows' server intervals, summed
	client       clientStats               // the records that ended inside the paired windows' server intervals
	ambiguous    int                       // records that ended too close to a snapshot to say whether it counted them
	ambiguousTok float64                   // their usage tokens (prompt + output)
	// straddleTok bounds the tokens an engine that counts as it works
	// (not at finish) may have counted on the other side of a window edge:
	// those of the requests in flight at an edge (0 for SGLang, and after a
	// run, whose windows open and close with nothing in flight).
	straddleTok float64
	// tokForeign is foreign traffic inferred from the generated-token
	// counter, for an engine that counts no requests.
	tokForeign tokenForeign

	// engineChanges are the targets' /metrics changing from one engine
	// family's names to another's (scrape.DialectChanges); acrossChange
	// the measured windows left out for one (a change inside them, or
	// snapshots of another family than the one the run is read in).
	engineChanges []scrape.DialectChange
	acrossChange  []string
	// gaugeRows are the scrapes the gauge checks read: all of them, but
	// after a change of engine only those in the run's own family's names
	// (another engine's gauges mean other things: SGLang's are logged).
	gaugeRows []scrape.Row

	origin time.Time
	flight inflight
}

func (a *analysis) paired() bool { return len(a.windows) > 0 }

func analyse(in Input) *analysis {
	in.digested()
	a := &analysis{in: in, flight: newInflight(in.Records), origin: in.Origin}
	if a.origin.IsZero() {
		a.origin = originFromRows(in.Rows)
	}
	dialect := in.Dialect
	a.engineChanges = scrape.DialectChanges(in.Rows)
	if dialect == "" && len(a.engineChanges) > 0 {
		dialect = a.engineChanges[0].From
	}
	for _, w := range in.Windows {
		if !w.Measured {
			continue
		}
		if !usable(w.Before) || !usable(w.After) || w.Before.Target != w.After.Target {
			a.unpaired = append(a.unpaired, w)
			continue
		}
		chain := windowChain(w, in.Rows)
		if len(a.engineChanges) > 0 && (len(scrape.DialectChanges(chain)) > 0 || w.Before.Snapshot.Dialect != dialect) {
			// A change of engine inside the window, or a window read
			// entirely in another engine's names: no delta is taken, no
			// comparison made (engineChange names it).
			a.acrossChange = append(a.acrossChange, w.Name)
			a.unpaired = append(a.unpaired, w)
			continue
		}
		d, rs := scrape.Increase(chain)
		a.resetEvents = append(a.resetEvents, rs...)
		a.addRestartGaps(chain, rs)
		for c, why := range d.Invalid {
			if a.invalid == nil {
				a.invalid = map[scrape.Concept]string{}
			}
			if _, seen := a.invalid[c]; !seen {
				a.invalid[c] = why
			}
		}
		if dialect == "" {
			dialect = d.Dialect
		}
		a.windows = append(a.windows, pairedWindow{Window: w, delta: d})
	}
	a.sem = semanticsOf(dialect)
	a.gaugeRows = in.Rows
	if len(a.engineChanges) > 0 {
		a.gaugeRows = nil
		for _, r := range in.Rows {
			if r.Snapshot == nil || r.Snapshot.Dialect == "" || r.Snapshot.Dialect == dialect {
				a.gaugeRows = append(a.gaugeRows, r)
			}
		}
	}

	// Which records each window's server delta covers: those whose end falls
	// between the two readings. Selecting by end time rather than by phase
	// name keeps the comparison honest when phases overlap (a cooldown
	// starts while the main phase drains): the engine counts by finish time.
	var set []*client.Record
	var setChunks []chunkdigest.Request
	for i, pw := range a.windows {
		if i == 0 {
			a.server = cloneSnapshot(pw.delta)
		} else {
			a.mixedBounds = append(a.mixedBounds, addInto(&a.server, pw.delta, a.mixedBounds)...)
		}
		for _, c := range pw.delta.Resets {
			if !slices.Contains(a.resets, c) {
				a.resets = append(a.resets, c)
			}
		}
		from, to := pw.Before.At, pw.After.At+pw.After.Duration
		a.span += to - from
		for j := range in.Records {
			r := &in.Records[j]
			if r.End > from && r.End <= to {
				set = append(set, r)
				setChunks = append(setChunks, in.Chunks[j])
			}
			if nearRow(r.End, pw.Before) || nearRow(r.End, pw.After) {
				a.ambiguous++
				a.ambiguousTok += float64(r.PromptTokens + r.OutputTokens)
			}
		}
	}
	sort.Slice(a.resets, func(i, j int) bool { return a.resets[i] < a.resets[j] })
	a.records = set
	a.client = newClientStats(set, setChunks, &in.Digest.InSpans)
	if !a.sem.TokensAtFinish {
		a.straddleTok = a.straddlingTokens(in.InFlight)
	}
	a.tokForeign = a.inferTokenForeign()
	return a
}

// straddlingTokens sums the usage tokens of the requests in flight at a
// paired window's edge: sent before it and ended after it. The opening
// snapshot read the counters at some instant of its scrape, so a request
// sent before the scrape ended and ended after it began may be on either
// side (a merged run's window opens at the latest shard's opening, with
// another shard's load under way: beside two CPU hogs under -race that
// scrape was slow enough for a request sent during it to have its prompt
// counted there, and the prompt tokens "differed" by that one request's).
// Those still in flight (inFlight, not yet recorded) count at the mean of
// the rest.
func (a *analysis) straddlingTokens(inFlight int) float64 {
	var tok, n float64
	for _, pw := range a.windows {
		type edge struct{ sentBefore, endedAfter time.Duration }
		closing := pw.After.At + pw.After.Duration
		edges := []edge{{pw.Before.At + pw.Before.Duration, pw.Before.At}, {closing, closing}}
		for j := range a.in.Records {
			r := &a.in.Records[j]
			for _, e := range edges {
				if r.SentOnWire() < e.sentBefore && r.End > e.endedAfter {
					tok += float64(r.PromptTokens + r.OutputTokens)
					n++
				}
			}
		}
	}
	if inFlight > 0 {
		mean := 0.0
		switch {
		case n > 0:
			mean = tok / n
		case a.client.ok > 0:
			mean = (a.client.prompt + a.client.output) / float64(a.client.ok)
		}
		tok += float64(inFlight) * mean
	}
	return tok
}

// usable reports whether a boundary snapshot can be differenced.
func usable(r *scrape.Row) bool { return r != nil && r.OK && r.Snapshot != nil }

// nearRow reports whether a record that ended at t may or may not have been
// counted by the scrape row: the engine counts a request at most edgeSlack
// before the client reads its end, so an end before the scrape began was
// counted, and one more than edgeSlack after it ended was not.
func nearRow(t time.Duration, row *scrape.Row) bool {
	return t > row.At && t <= row.At+row.Duration+edgeSlack
}

// originFromRows estimates the wall-clock time of the run clock's zero from
// the scrape rows, which carry both (zero time when there are none).
func originFromRows(rows []scrape.Row) time.Time {
	for _, r := range rows {
		if !r.Wall.IsZero() {
			return r.Wall.Add(-r.At)
		}
	}
	return time.Time{}
}

// span is a stretch of the run clock, (From, To].
type span struct{ From, To time.Duration }

// addRestartGaps notes, for each reset in chain (Increase's), the span from
// the scrape before it to the end of the scrape that saw it.
func (a *analysis) addRestartGaps(chain []scrape.Row, resets []scrape.Reset) {
	for _, r := range resets {
		i := slices.IndexFunc(chain, func(row scrape.Row) bool { return row.At == r.At })
		if i <= 0 {
			continue
		}
		g := span{From: chain[i-1].At, To: chain[i].At + chain[i].Duration}
		if a.restartGaps == nil {
			a.restartGaps = map[scrape.Concept][]span{}
		}
		if !slices.Contains(a.restartGaps[r.Concept], g) {
			a.restartGaps[r.Concept] = append(a.restartGaps[r.Concept], g)
		}
	}
}

// endedInRestartGaps counts the covered records of ours that succeeded and
// ended inside one of c's restart gaps: an engine that counted them before
// it restarted lost them from c's delta.
func (a *analysis) endedInRestartGaps(c scrape.Concept) int {
	n := 0
	for _, r := range a.records {
		if r.OK() && slices.ContainsFunc(a.restartGaps[c], func(g span) bool { return r.End > g.From && r.End <= g.To+edgeSlack }) {
			n++
		}
	}
	return n
}

// windowChain is what a window's delta is taken over: its opening
// snapshot, every successful scrape of the same target between the two, and
// its closing one, each well formed. Taking the delta scrape by scrape finds
// a reset inside the window (an engine restart) and keeps what was counted
// before it, as Prometheus's increase() does.
func windowChain(w Window, rows []scrape.Row) []scrape.Row {
	chain := []scrape.Row{*w.Before}
	for _, r := range rows {
		if r.Target == w.Before.Target && r.At > w.Before.At && r.At < w.After.At && usable(&r) {
			chain = append(chain, r)
		}
	}
	chain = append(chain, *w.After)
	slices.SortStableFunc(chain[1:len(chain)-1], func(a, b scrape.Row) int { return compareDur(a.At, b.At) })
	for i := range chain {
		s := wellFormed(*chain[i].Snapshot)
		chain[i].Snapshot = &s
	}
	return chain
}

// wellFormed returns s without the histograms whose bucket counts do not
// match their bounds: a snapshot read back from a hand-edited or damaged
// scrapes.jsonl must not make a delta panic.
func wellFormed(s scrape.Snapshot) scrape.Snapshot {
	bad := false
	for _, h := range s.Histograms {
		if len(h.Cumulative) != len(h.Bounds) {
			bad = true
		}
	}
	if !bad {
		return s
	}
	out := s
	out.Histograms = map[scrape.Concept]scrape.Histogram{}
	for c, h := range s.Histograms {
		if len(h.Cumulative) == len(h.Bounds) {
			out.Histograms[c] = h
		}
	}
	return out
}

func cloneSnapshot(s scrape.Snapshot) scrape.Snapshot {
	out := scrape.Snapshot{Dialect: s.Dialect, Counters: map[scrape.Concept]float64{}, Histograms: map[scrape.Concept]scrape.Histogram{}}
	for k, v := range s.Counters {
		out.Counters[k] = v
	}
	for k, h := range s.Histograms {
		out.Histograms[k] = scrape.Histogram{Bounds: h.Bounds, Cumulative: slices.Clone(h.Cumulative), Count: h.Count, Sum: h.Sum}
	}
	return out
}

// addInto adds the counters and histograms of the delta d (of a window that
// does not overlap the others) into acc. A histogram whose buckets differ
// from acc's cannot be added: it is dropped from acc and returned, so the
// caller can say the comparison is incomplete; histograms already dropped
// stay out.
func addInto(acc *scrape.Snapshot, d scrape.Snapshot, dropped []scrape.Concept) (mixed []scrape.Concept) {
	for k, v := range d.Counters {
		acc.Counters[k] += v
	}
	for _, k := range sortedConcepts(d.Histograms) {
		h := d.Histograms[k]
		if slices.Contains(dropped, k) {
			continue
		}
		prev, ok := acc.Histograms[k]
		if !ok {
			acc.Histograms[k] = h
			continue
		}
		if !slices.Equal(prev.Bounds, h.Bounds) || len(prev.Cumulative) != len(h.Cumulative) {
			delete(acc.Histograms, k)
			mixed = append(mixed, k)
			continue
		}
		for i := range prev.Cumulative {
			prev.Cumulative[i] += h.Cumulative[i]
		}
		prev.Count += h.Count
		prev.Sum += h.Sum
		acc.Histograms[k] = prev
	}
	return mixed
}

func sortedConcepts[V any](m map[scrape.Concept]V) []scrape.Concept {
	ks := make([]scrape.Concept, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	order := map[scrape.Concept]int{}
	for i, c := range scrape.Concepts() {
		order[c] = i
	}
	sort.Slice(ks, func(i, j int) bool {
		oi, iok := order[ks[i]]
		oj, jok := order[ks[j]]
		if iok != jok {
			return iok
		}
		if oi != oj {
			return oi < oj
		}
		return ks[i] < ks[j]
	})
	return ks
}

// inflight answers "how many of the client's requests were in flight at t"
// in O(log n), from the sorted send and end times of every record.
type inflight struct {
	sends, ends []time.Duration
}

func newInflight(records []client.Record) inflight {
	f := inflight{sends: make([]time.Duration, 0, len(records)), ends: make([]time.Duration, 0, len(records))}
	for i := range records {
		// From the hand-over to the transport, not the wire: a request
		// waiting for a pooled connection is in flight for the client, and
		// a cap hidden in the transport shows as the gap to the engine.
		f.sends = append(f.sends, records[i].Sent)
		f.ends = append(f.ends, records[i].End)
	}
	slices.Sort(f.sends)
	slices.Sort(f.ends)
	return f
}

// at is the number of records sent at or before t that had not ended by t.
func (f inflight) at(t time.Duration) int {
	sent, _ := slices.BinarySearch(f.sends, t+1)
	ended, _ := slices.BinarySearch(f.ends, t+1)
	return sent - ended
}

// idle reports whether no record was in flight during [from, to], and at
// least one had been sent before.
func (f inflight) idle(from, to time.Duration) bool {
	if len(f.sends) == 0 || f.sends[0] > from {
		return false
	}
	sentBefore, _ := slices.BinarySearch(f.sends, from)
	sentBy, _ := slices.BinarySearch(f.sends, to+1)
	return f.at(from) == 0 && sentBy == sentBefore
}

// overlaps reports whether any record was in flight at some point of
// (from, to): sent before to and not ended by from.
func (f inflight) overlaps(from, to time.Duration) bool {
	sent, _ := slices.BinarySearch(f.sends, to)
	ended, _ := slices.BinarySearch(f.ends, from+1)
	return sent-ended > 0
}
