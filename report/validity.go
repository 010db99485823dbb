package report

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/llmbench-org/llmbench/report/validity"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// judged keeps states as the run's validity: the named states, and beside
// them for compatibility valid (no invalid state) and problems (the invalid
// states' words, in order).
func (h *Health) judged(states []validity.State) {
	if states == nil {
		states = []validity.State{}
	}
	h.States = states
	h.Problems = validity.Problems(states)
	h.Valid = validity.Valid(states)
}

// validityInput gathers what package validity decides from: the measured
// phases' requests and scrapes, figures already in s (client, health), the
// run's own bookkeeping in meta.
func validityInput(meta rundir.RunMeta, s *Summary, records []request, rows []scrape.Row, partialLines, duplicates int) validity.Input {
	c := s.Client
	in := validity.Input{
		Sent: c.Requests.Sent, Failed: c.Requests.Failed, Canceled: c.Requests.Canceled,
		MaxFailureRate:  meta.MaxFailureRate,
		Client:          meta.Client,
		DroppedArrivals: meta.DroppedArrivals, LateArrivals: meta.LateArrivals,
		LateP99:      time.Duration(s.Health.ScheduleLag.P99 * float64(time.Second)),
		Rates:        phaseRates(meta.Phases, records),
		LengthsAsked: meta.IgnoreEOS == nil || *meta.IgnoreEOS,
		Stopped:      meta.Stopped,
		Records:      s.Health.Records,
		PartialLines: partialLines, Duplicates: duplicates,
	}
	if o := c.Tokens.OutputShort; o != nil {
		in.ShortRequests, in.LengthsOf, in.MissingFraction = o.Requests, o.Of, o.MissingFraction
	}
	in.Restarts, in.FirstRestart = restarts(meta.Phases, rows)
	return in
}

// restarts counts the engine's restarts seen over the measured phases: the
// scrapes at which some counter's total, or some histogram's count, of a
// target fell below the scrape before (many concepts fall at one restart;
// a counter that only lost one of its series, as scrape.Increase also
// counts, is not a restart), and when the first was seen. Every scrape of
// the measured stretch is chained, not only the phases' paired boundaries,
// so a run whose last scrape failed (the engine down at its end) still
// shows the restarts before. The stretch runs from each measured phase's
// opening snapshot to its closing one (taken after its last request
// settled, past its End): a restart seen only by the closing snapshot is
// one of the window's, as the reconciliation counts it (counter_reset).
func restarts(phases []rundir.PhaseMeta, rows []scrape.Row) (n int, first time.Duration) {
	from, to, measured := time.Duration(math.MaxInt64), time.Duration(0), false
	for _, ph := range phases {
		if ph.Measured {
			start, end := ph.Start, ph.End
			if ph.Before != nil {
				start = min(start, ph.Before.At)
			}
			if ph.After != nil {
				end = max(end, ph.After.At)
			}
			from, to, measured = min(from, start), max(to, end), true
		}
	}
	if !measured {
		return 0, 0
	}
	byTarget := map[string][]scrape.Row{}
	for _, r := range rows {
		if r.OK && r.Snapshot != nil && r.At >= from && r.At <= to {
			byTarget[r.Target] = append(byTarget[r.Target], r)
		}
	}
	for _, chain := range byTarget {
		slices.SortStableFunc(chain, func(a, b scrape.Row) int { return cmp.Compare(a.At, b.At) })
		for i := 1; i < len(chain); i++ {
			if wentDown(chain[i-1].Snapshot, chain[i].Snapshot) {
				if n == 0 || chain[i].At < first {
					first = chain[i].At
				}
				n++
			}
		}
	}
	return n, first
}

// wentDown reports whether some counter or histogram count in both
// snapshots is lower in after.
func wentDown(before, after *scrape.Snapshot) bool {
	for c, v := range after.Counters {
		if b, ok := before.Counters[c]; ok && v < b {
			return true
		}
	}
	for c, h := range after.Histograms {
		if b, ok := before.Histograms[c]; ok && h.Count < b.Count {
			return true
		}
	}
	return false
}

// phaseRates is each measured open-loop phase's arrival rate: planned, over
// the span of its requests' intended send times, and achieved, over the
// span of their actual sends (the same requests, so a Poisson schedule's
// own spread cancels). A phase needs three requests for a rate.
func phaseRates(phases []rundir.PhaseMeta, records []request) []validity.PhaseRate {
	type span struct {
		n                   int
		firstDue, lastDue   time.Duration
		firstSent, lastSent time.Duration
	}
	spans := map[string]*span{}
	for _, r := range records {
		if r.Intended <= 0 { // closed loop: no schedule
			continue
		}
		sp := spans[r.Phase]
		if sp == nil {
			sp = &span{firstDue: math.MaxInt64, firstSent: math.MaxInt64}
			spans[r.Phase] = sp
		}
		sp.n++
		sp.firstDue, sp.lastDue = min(sp.firstDue, r.Intended), max(sp.lastDue, r.Intended)
		sp.firstSent, sp.lastSent = min(sp.firstSent, r.Sent), max(sp.lastSent, r.Sent)
	}
	var out []validity.PhaseRate
	for _, ph := range phases {
		sp := spans[ph.Name]
		if !ph.Measured || sp == nil || sp.n < 3 || sp.lastDue <= sp.firstDue || sp.lastSent <= sp.firstSent {
			continue
		}
		gaps := float64(sp.n - 1)
		out = append(out, validity.PhaseRate{Phase: ph.Name, Requests: sp.n,
			Planned:  gaps / (sp.lastDue - sp.firstDue).Seconds(),
			Achieved: gaps / (sp.lastSent - sp.firstSent).Seconds()})
	}
	return out
}

// stateText is a state for a reader who already saw the problems: a
// warning's words and what the latencies cover, or for an invalid state
// (its words are the problems above) what the latencies cover.
func stateText(st validity.State) string {
	if st.Severity == validity.Invalid {
		return upperFirst(st.Covers)
	}
	return upperFirst(st.Says) + "; " + st.Covers
}
