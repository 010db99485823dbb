package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// measuredPhases are the phases whose requests count in the results.
func measuredPhases(meta rundir.RunMeta) []rundir.PhaseMeta {
	var out []rundir.PhaseMeta
	for _, ph := range meta.Phases {
		if ph.Measured {
			out = append(out, ph)
		}
	}
	return out
}

// serverSide derives the engine's view of the given phases from the
// snapshots taken at their boundaries; nil when there are none.
func serverSide(meta rundir.RunMeta, phases []rundir.PhaseMeta, rows []scrape.Row, samples clientSamples) *ServerSide {
	var total *scrape.Snapshot
	var targets []string
	dialect := meta.Engine.Dialect
	for _, ph := range phases {
		if ph.Before == nil || ph.After == nil || !ph.Before.OK || !ph.After.OK ||
			ph.Before.Snapshot == nil || ph.After.Snapshot == nil {
			continue
		}
		d := phaseIncrease(ph, rows)
		if total == nil {
			total = &d
		} else {
			// Phases do not overlap, so their deltas add up.
			merged := scrape.Sum(*total, d)
			total = &merged
		}
		if d.Dialect != "" {
			dialect = d.Dialect
		}
		if !slices.Contains(targets, ph.After.Target) {
			targets = append(targets, ph.After.Target)
		}
	}
	if total == nil {
		return nil
	}
	s := &ServerSide{
		Dialect: dialect, Targets: targets,
		Latency: map[string]ServerDist{}, Counters: map[string]float64{}, Gauges: map[string]GaugeStat{},
	}
	for c, v := range total.Counters {
		s.Counters[string(c)] = v
	}
	for c, h := range total.Histograms {
		if h.Count == 0 {
			continue
		}
		sd := ServerDist{N: h.Count, P50: estimate(h, 0.5), P90: estimate(h, 0.9), P99: estimate(h, 0.99), Quantiles: map[string]BucketEstimate{}}
		for _, p := range percentilesOf(meta) {
			sd.Quantiles[rundir.PercentileName(p)] = estimate(h, p/100)
		}
		if m, ok := h.Mean(); ok {
			sd.Mean = m
		}
		if xs := samples[c]; len(xs) > 0 {
			sd.CDF, sd.CDFMaxGap = scrape.CompareCDF(h, xs)
		}
		s.Latency[string(c)] = sd
	}
	s.Gauges = gaugeStats(phases, rows)
	s.Replicas = replicaCounters(phases)
	s.Notes = dialectNotes(dialect, s)
	return s
}

// phaseIncrease is the engine's counters' and histograms' increase over a
// phase, as Prometheus's increase() takes it: along every scrape of each
// target between the phase's boundary snapshots, so that an engine that
// restarted mid-phase (its counters reset to zero) still counts what it did
// before the restart. With no scrape between the boundaries it is their
// Delta.
func phaseIncrease(ph rundir.PhaseMeta, rows []scrape.Row) scrape.Snapshot {
	type bounds struct{ before, after scrape.Row }
	pairs := map[string]bounds{}
	if len(ph.BeforeRows) > 0 && len(ph.AfterRows) > 0 {
		before := map[string]scrape.Row{}
		for _, r := range ph.BeforeRows {
			before[r.Target] = r
		}
		for _, r := range ph.AfterRows {
			if b, ok := before[r.Target]; ok {
				pairs[r.Target] = bounds{b, r}
			}
		}
	} else {
		pairs[ph.After.Target] = bounds{*ph.Before, *ph.After}
	}
	targets := make([]string, 0, len(pairs))
	for t := range pairs {
		targets = append(targets, t)
	}
	slices.Sort(targets)
	var total *scrape.Snapshot
	for _, t := range targets {
		p := pairs[t]
		if !p.before.OK || !p.after.OK || p.before.Snapshot == nil || p.after.Snapshot == nil {
			continue
		}
		chain := []scrape.Row{p.before}
		for _, r := range rows {
			if r.Target == t && r.At > p.before.At && r.At < p.after.At {
				chain = append(chain, r)
			}
		}
		chain = append(chain, p.after)
		slices.SortStableFunc(chain, func(a, b scrape.Row) int { return cmp.Compare(a.At, b.At) })
		d, _ := scrape.Increase(chain)
		if total == nil {
			total = &d
		} else {
			sum := scrape.Sum(*total, d)
			total = &sum
		}
	}
	if total == nil {
		return scrape.Delta(*ph.Before.Snapshot, *ph.After.Snapshot)
	}
	return *total
}

// replicaCounters is each target's counter deltas over the phases, from the
// per-target boundary scrapes; nil with a single target.
func replicaCounters(phases []rundir.PhaseMeta) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for _, ph := range phases {
		before := map[string]*scrape.Snapshot{}
		for i := range ph.BeforeRows {
			if r := &ph.BeforeRows[i]; r.OK && r.Snapshot != nil {
				before[r.Target] = r.Snapshot
			}
		}
		for _, r := range ph.AfterRows {
			b, ok := before[r.Target]
			if !r.OK || r.Snapshot == nil || !ok {
				continue
			}
			if out[r.Target] == nil {
				out[r.Target] = map[string]float64{}
			}
			for c, v := range scrape.Delta(*b, *r.Snapshot).Counters {
				out[r.Target][string(c)] += v
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// dialectNotes are the dialect's own remarks on the concepts this summary
// reports, so a reader comparing columns knows what each server number means.
func dialectNotes(dialect string, s *ServerSide) []string {
	d, err := scrape.DialectFor(dialect)
	if err != nil {
		return nil
	}
	desc, ok := d.(scrape.Describer)
	if !ok {
		return nil
	}
	var notes []string
	for _, m := range desc.Describe() {
		_, lat := s.Latency[string(m.Concept)]
		_, cnt := s.Counters[string(m.Concept)]
		if m.Note != "" && (lat || cnt) {
			notes = append(notes, fmt.Sprintf("%s (%s): %s", m.Concept, strings.Join(m.Metrics[:min(1, len(m.Metrics))], ""), m.Note))
		}
	}
	return notes
}

func estimate(h scrape.Histogram, q float64) BucketEstimate {
	e := h.Quantile(q)
	return BucketEstimate{Value: e.Value, Bucket: [2]float64{e.Lower, e.Upper}, AboveTop: e.AboveTop}
}

// gaugeStats summarises each gauge over the successful scrapes that fall
// inside the phases.
func gaugeStats(phases []rundir.PhaseMeta, rows []scrape.Row) map[string]GaugeStat {
	type series struct {
		stat GaugeStat
		sum  float64
		// mean is a running mean, used when the sum overflows: finite
		// gauges from outside (1e308) must not average to +Inf, which
		// summary.json cannot encode. (The sum is kept for every other
		// case: it is exact where the running mean rounds.)
		mean float64
	}
	acc := map[scrape.Concept]*series{}
	for _, row := range rows {
		if !row.OK || row.Snapshot == nil || !inPhases(phases, row) {
			continue
		}
		for c, v := range row.Snapshot.Gauges {
			s, ok := acc[c]
			if !ok {
				s = &series{stat: GaugeStat{Max: math.Inf(-1)}}
				acc[c] = s
			}
			s.stat.N++
			s.sum += v
			s.mean += (v - s.mean) / float64(s.stat.N)
			s.stat.Max = max(s.stat.Max, v)
			s.stat.Last = v
		}
	}
	out := make(map[string]GaugeStat, len(acc))
	for c, s := range acc {
		s.stat.Mean = s.sum / float64(s.stat.N)
		if math.IsInf(s.sum, 0) {
			s.stat.Mean = s.mean
		}
		s.stat.UpdateInterval = updateInterval(phases, rows, c)
		out[string(c)] = s.stat
	}
	return out
}

// updateInterval is the mean time between scrapes whose value differs from the
// previous scrape's, over the phases; 0 when the value never changed.
func updateInterval(phases []rundir.PhaseMeta, rows []scrape.Row, c scrape.Concept) float64 {
	var first, last float64
	changes := 0
	have := false
	var prev float64
	for _, row := range rows {
		if !row.OK || row.Snapshot == nil || !inPhases(phases, row) {
			continue
		}
		v, ok := row.Snapshot.Gauges[c]
		if !ok {
			continue
		}
		t := row.At.Seconds()
		if !have {
			have, prev, first, last = true, v, t, t
			continue
		}
		if v != prev {
			changes++
			last = t
		}
		prev = v
	}
	if changes == 0 {
		return 0
	}
	return (last - first) / float64(changes)
}

// inPhases reports whether a scrape started inside one of the phases.
func inPhases(phases []rundir.PhaseMeta, row scrape.Row) bool {
	for _, ph := range phases {
		if row.At >= ph.Start && row.At <= ph.End {
			return true
		}
	}
	return false
}

// percentilesOf are the run's report percentiles.
func percentilesOf(meta rundir.RunMeta) []float64 {
	if len(meta.Percentiles) == 0 {
		return rundir.DefaultPercentiles
	}
	return meta.Percentiles
}
