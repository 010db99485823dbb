package gates

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/llmbench-org/llmbench/internal/interval"
	"github.com/llmbench-org/llmbench/report/validity"
	"github.com/llmbench-org/llmbench/selfmon"
)

// Side is the evidence on one side of a comparison: one run, or several
// runs of the same scenario (the trials of a set, a baseline history).
type Side []Run

// Options configure how gates are decided.
type Options struct {
	Bootstrap Bootstrap
	// Floors are the noise floors learned from A/A pairs on the machine in
	// use (llmbench noise); the zero value: none learned.
	Floors Floors
}

// Floors are per-metric noise floors: how far a regression of one run
// against another of the same scenario moved with nothing changed, as a
// fraction of the baseline. A comparison with a single run on a side
// cannot see run-to-run variance in its data; the floor stands in for it.
type Floors struct {
	From     string             // where they were learned, for the reasons ("noise.json: 10 A/A pairs on host1")
	ByMetric map[string]float64 // metric name → floor
	// Rest is the floor of every metric ByMetric does not name (nil: none
	// learned for them).
	Rest *float64
}

// of is the floor learned for a metric (a phase's metric falls back on the
// whole run's).
func (f Floors) of(name string) (float64, bool) {
	if v, ok := f.ByMetric[name]; ok {
		return v, true
	}
	if v, ok := f.ByMetric[innerName(name)]; ok {
		return v, true
	}
	if f.Rest != nil {
		return *f.Rest, true
	}
	return 0, false
}

// Default noise floors, for a comparison with a single run on a side and no
// floor learned on this machine. Measured between identical ci-gate runs a
// few seconds apart on a busy 2-core machine (docs/decisions/0034): a
// centre statistic moved by up to 16.6 % (E2E p50; TTFT mean 15.8 %), a
// tail one by up to 100.7 % (ITL p99; TTFT p99 76.8 %, and issue 20 saw
// +59.3 %).
const (
	DefaultCentreFloor = 0.20 // means, medians, rates
	DefaultTailFloor   = 1.00 // quantiles above the median, maxima
)

// DefaultFloor is the floor of a metric when none was learned.
func DefaultFloor(name string) float64 {
	if p, ok := quantileOf(name); ok && p > 0.5 || strings.HasSuffix(name, ".max") {
		return DefaultTailFloor
	}
	return DefaultCentreFloor
}

// quantileOf is the quantile a metric name ends in (…p99 → 0.99).
func quantileOf(name string) (float64, bool) {
	i := strings.LastIndex(name, ".p")
	if i < 0 {
		return 0, false
	}
	p, err := strconv.ParseFloat(name[i+2:], 64)
	if err != nil || p <= 0 || p >= 100 {
		return 0, false
	}
	return p / 100, true
}

// noisy reports whether a baseline gate on m is decided by the noise model:
// a latency, a rate or a fraction against a monotone limit. Counts and
// true/false are what happened, exactly.
func noisy(m metric, g Gate) bool {
	if m.unit != seconds && m.unit != rate && m.unit != fraction {
		return false
	}
	switch g.Op {
	case Less, LessEqual, Greater, GreaterEqual:
		return true
	}
	return false
}

// contrast decides a gate comparing the two sides: a regression
// (cur/base − 1, or 1 − cur/base where higher is better), a factor
// (cur/base against baseline × F) or a difference (cur − base against
// baseline ± V). Its interval is the hierarchical bootstrap's (runs, then
// requests within each drawn run) when every run has its records, the
// runs' bootstrap when both sides have several runs but no records, and the
// point otherwise; a side with a single run widens it by the noise floor.
// It fails only when the widened interval lies wholly beyond the limit,
// passes when wholly within, and is inconclusive otherwise.
func (ev *evaluator) contrast(r Result, g Gate, m metric, curPt, basePt float64) Result {
	f, limit, show := contrastOf(g, m)
	point := f(curPt, basePt)
	r.Observed, r.Limit = finite(point), limit
	holds := func(x float64) bool { return g.Op.holds(x, limit) }

	lo, hi, how := ev.spread(m, f, point, show)
	floor, from := ev.floor(m)
	widen := floor
	if !g.Regression && g.RHS.Arith != Times {
		widen = floor * math.Abs(basePt) // a difference: the floor is a fraction of the baseline
	}
	iv := interval.Interval{Lo: lo - widen, Hi: hi + widen}
	verdict := decide(iv, holds)

	// A baseline form (× F, ± V) is shown as the run's value against the
	// limit the baseline sets: the contrast mapped back onto the value.
	view := func(x float64) float64 { return x }
	if !g.Regression {
		view = func(x float64) float64 {
			if g.RHS.Arith == Times {
				return x * basePt
			}
			return x + basePt
		}
		show = m.unit.format
	}
	r.Observed, r.Limit = finite(view(point)), finite(view(limit))
	if lo != hi || floor > 0 {
		r.Interval = &[2]float64{finite(view(iv.Lo)), finite(view(iv.Hi))}
		if lo != hi {
			r.Confidence = ev.opt.Bootstrap.Confidence
		}
	}
	r.NoiseFloor, r.FloorFrom = floor, from

	change := fmt.Sprintf("%s (baseline %s → %s)", show(view(point)), m.unit.format(basePt), m.unit.format(curPt))
	if len(ev.cur) > 1 || len(ev.base) > 1 {
		change = fmt.Sprintf("%s (baseline %s over %d runs → %s over %d)", show(view(point)), m.unit.format(basePt), len(ev.base), m.unit.format(curPt), len(ev.cur))
	}
	if !g.Regression {
		change = m.unit.format(curPt)
		if len(ev.cur) > 1 {
			change += fmt.Sprintf(" over %d runs", len(ev.cur))
		}
	}
	evidence := how
	if floor > 0 {
		evidence += fmt.Sprintf(", widened by a ±%.1f%% noise floor (%s) to %s … %s", 100*floor, from, show(view(iv.Lo)), show(view(iv.Hi)))
	}
	allowed := fmt.Sprintf("%s %s", g.Op, show(view(limit)))
	if !g.Regression {
		allowed += " (" + baselineHow(g, m, basePt, len(ev.base)) + ")"
	}
	switch verdict {
	case interval.Fail:
		r.Status = Fail
		r.Reason = fmt.Sprintf("%s; %s: wholly beyond %s", change, evidence, allowed)
		if why := HostDelay(ev.cur, ev.base); why != "" {
			r.Status = Inconclusive
			r.Reason += "; but " + why
			r.ToDecide = "runs on a quieter host (or with cores set aside for llmbench)"
		}
	case interval.Pass:
		r.Status = Pass
		r.Reason = fmt.Sprintf("%s; %s: wholly within %s", change, evidence, allowed)
	default:
		r.Status = Inconclusive
		r.Reason = fmt.Sprintf("%s; %s: straddles %s, not beyond the noise", change, evidence, allowed)
		r.ToDecide = ev.toDecide(lo, hi, holds, floor, from)
	}
	return r
}

// baselineHow says how a baseline form sets its limit.
func baselineHow(g Gate, m metric, base float64, runs int) string {
	b := "baseline " + m.unit.format(base)
	if runs > 1 {
		b += fmt.Sprintf(" over %d runs", runs)
	}
	switch g.RHS.Arith {
	case Times:
		return fmt.Sprintf("%s × %s", b, g.RHS.Value)
	case Plus:
		return fmt.Sprintf("%s + %s", b, g.RHS.Value)
	case Minus:
		return fmt.Sprintf("%s − %s", b, g.RHS.Value)
	}
	return b
}

// contrastOf is the figure a baseline gate compares, its limit, and how to
// print the figure.
func contrastOf(g Gate, m metric) (f func(cur, base float64) float64, limit float64, show func(float64) string) {
	v := g.RHS.Value.Value()
	switch {
	case g.Regression:
		return func(c, b float64) float64 { return regression(c, b, m.better) }, v, signedPct
	case g.RHS.Arith == Times:
		return func(c, b float64) float64 {
				if b == 0 {
					return regression(c, b, lower) // ±Inf, or 0 when both are 0
				}
				return c / b
			}, v, func(x float64) string {
				return fmt.Sprintf("×%.3f", x)
			}
	}
	switch g.RHS.Arith {
	case Plus:
		limit = v
	case Minus:
		limit = -v
	}
	return func(c, b float64) float64 { return c - b }, limit, func(x float64) string {
		if x >= 0 {
			return "+" + m.unit.format(x)
		}
		return "−" + m.unit.format(-x)
	}
}

// spread is the interval of the contrast f between the sides, and in words
// how it was found.
func (ev *evaluator) spread(m metric, f func(c, b float64) float64, point float64, show func(float64) string) (lo, hi float64, how string) {
	b := ev.opt.Bootstrap
	if m.bootstrappable() {
		cp, okC := ev.pool(m, ev.cur, false)
		bp, okB := ev.pool(m, ev.base, true)
		if okC && okB {
			lo, hi = hierarchical(cp, bp, m, b, f)
			over := "requests"
			if len(ev.cur) > 1 || len(ev.base) > 1 {
				over = "runs, then requests"
			}
			return lo, hi, fmt.Sprintf("%g%% CI %s … %s (bootstrap over %s)", 100*b.Confidence, show(lo), show(hi), over)
		}
	}
	if len(ev.cur) >= 2 && len(ev.base) >= 2 {
		cv, _ := readSide(m, ev.cur)
		bv, _ := readSide(m, ev.base)
		lo, hi = runBootstrap(values(cv), values(bv), b, f)
		return lo, hi, fmt.Sprintf("%g%% CI %s … %s (bootstrap over runs)", 100*b.Confidence, show(lo), show(hi))
	}
	return point, point, "point estimate (" + ev.noInterval(m) + ")"
}

func values(rs []reading) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = r.v
	}
	return out
}

// noInterval says why a contrast has no interval of its own.
func (ev *evaluator) noInterval(m metric) string {
	if !m.bootstrappable() {
		return "no raw samples behind " + m.name
	}
	for _, side := range []Side{ev.cur, ev.base} {
		for _, r := range side {
			if !r.hasSamples(m) {
				return "no raw records of both runs"
			}
		}
	}
	return fmt.Sprintf("too few requests for an interval (fewer than %d in a run)", minClusters)
}

// floor is the noise floor a contrast is widened by, and where it came
// from: none when both sides have several runs (their spread is in the
// bootstrap); with a single run on a side, the larger of the floor learned
// on this machine and the one the other side's history shows (a prediction
// interval for one more run, when it has 3 runs or more), else the default.
func (ev *evaluator) floor(m metric) (float64, string) {
	if len(ev.cur) >= 2 && len(ev.base) >= 2 {
		return 0, ""
	}
	floor, from := 0.0, ""
	if v, ok := ev.opt.Floors.of(m.name); ok {
		floor, from = v, ev.opt.Floors.From
	}
	for _, side := range []Side{ev.base, ev.cur} {
		if len(side) < 3 {
			continue
		}
		rs, _ := readSide(m, side)
		if h, ok := historyFloor(values(rs)); ok && h > floor {
			floor, from = h, fmt.Sprintf("the spread of %d runs on a side", len(side))
		}
	}
	if from == "" {
		return DefaultFloor(m.name), "the default: no floor learned on this machine"
	}
	return floor, from
}

// historyFloor is the half-width of the 95 % prediction interval of one
// more run's value from the runs' values, as a fraction of their mean (a
// Student's t threshold over history, as Bencher sets its thresholds).
func historyFloor(xs []float64) (float64, bool) {
	k := len(xs)
	mean, sd := meanSD(xs)
	if k < 3 || mean == 0 || math.IsNaN(sd) {
		return 0, false
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(k - 1)}.Quantile(1 - (1-interval.Confidence)/2)
	return t * sd * math.Sqrt(1+1/float64(k)) / math.Abs(mean), true
}

// toDecide says what evidence would decide a contrast left inconclusive.
func (ev *evaluator) toDecide(lo, hi float64, holds func(float64) bool, floor float64, from string) string {
	var parts []string
	if len(ev.cur) < 3 || len(ev.base) < 3 {
		parts = append(parts, "3 or more runs a side (llmbench run --repeat 3; --baseline once per baseline run, or a trial set)")
	}
	if floor > 0 && strings.HasPrefix(from, "the default") {
		parts = append(parts, "a noise floor learned on this machine (llmbench noise SCENARIO --pairs 10, then --noise FILE)")
	}
	if holds(lo) != holds(hi) {
		parts = append(parts, "more requests per run (the interval over requests alone straddles the limit)")
	}
	parts = append(parts, "a quieter host")
	return strings.Join(parts, "; or ")
}

// HostDelay says whether a run on either side was delayed by its host
// (its client's scheduler p99 beyond selfmon's bound): a regression seen
// then may be the host's, and so may an improvement ("" when none was).
func HostDelay(sides ...Side) string {
	for _, side := range sides {
		for _, r := range side {
			c := r.Summary.Health.Client
			if c.SchedLatencyP99_s > selfmon.LateScheduler.Seconds() {
				return fmt.Sprintf("run %s's client waited %.1f ms (p99) to be scheduled: the host delayed it", r.id(), 1000*c.SchedLatencyP99_s)
			}
		}
	}
	return ""
}

// fit makes a decided gate inconclusive when a run it rests on is not
// valid: its numbers do not describe the load as planned, so neither a pass
// nor a fail is earned. Gates on the run's health and on its failures still
// decide: they are about exactly what made it not valid.
func (ev *evaluator) fit(r Result, m metric, withBase bool) Result {
	if r.Status == Error || judgesValidity(innerName(m.name)) {
		return r
	}
	sides := []struct {
		what string
		side Side
	}{{"the run", ev.cur}}
	if withBase {
		sides = append(sides, struct {
			what string
			side Side
		}{"the baseline", ev.base})
	}
	for _, s := range sides {
		for i, run := range s.side {
			states, bad := invalidStates(run)
			if !bad {
				continue
			}
			who := s.what
			if len(s.side) > 1 {
				who = fmt.Sprintf("%s %d of %d (%s)", s.what, i+1, len(s.side), run.id())
			}
			r.Reason = fmt.Sprintf("%s is not valid (%s), so %s is undecided: it measured %s", who, strings.Join(states, ", "), r.Gate, r.Reason)
			r.Status = Inconclusive
			r.ToDecide = "a valid run: " + invalidAdvice(run)
			return r
		}
	}
	return r
}

// judgesValidity: gates on what validity itself is made of.
func judgesValidity(name string) bool {
	return strings.HasPrefix(name, "health.") || strings.HasPrefix(name, "client.requests.") ||
		strings.HasPrefix(name, "client.errors.") || name == "client.error_rate"
}

// invalidStates names what makes a run not valid; bad is false for a valid
// run (and for a summary that says not valid but names no reason).
func invalidStates(r Run) (states []string, bad bool) {
	h := r.Summary.Health
	if h.Valid {
		return nil, false
	}
	for _, st := range h.States {
		if st.Severity == validity.Invalid {
			states = append(states, st.Name)
		}
	}
	if len(states) == 0 && len(h.Problems) > 0 {
		states = append(states, h.Problems[0])
	}
	return states, len(states) > 0
}

// invalidAdvice is what the first invalid state says to do.
func invalidAdvice(r Run) string {
	for _, st := range r.Summary.Health.States {
		if st.Severity == validity.Invalid {
			return st.Says
		}
	}
	return "see the run's health.problems"
}

// pool is one side's samples of a family, all runs together: clusters
// (requests) numbered across runs, runs[i] the clusters of run i.
type pool struct {
	s    samples
	runs [][2]int
}

type poolKey struct {
	base   bool
	family family
	phase  string
}

// pool gathers a side's samples of m, ok false when a run lacks its records
// or has fewer than minClusters requests with samples.
func (ev *evaluator) pool(m metric, side Side, base bool) (pool, bool) {
	if !m.bootstrappable() || len(side) == 0 {
		return pool{}, false
	}
	key := poolKey{base, m.family, m.phase}
	if p, ok := ev.pools[key]; ok {
		return p, p.runs != nil
	}
	p := poolOf(side, m)
	ev.pools[key] = p
	return p, p.runs != nil
}

func poolOf(side Side, m metric) pool {
	type tagged struct {
		v float64
		c int32
	}
	var all []tagged
	var sizes []int
	var runs [][2]int
	for _, r := range side {
		if !r.hasSamples(m) {
			return pool{}
		}
		s := r.samplesOf(m)
		if len(s.sizes) < minClusters {
			return pool{}
		}
		off := len(sizes)
		for i, v := range s.values {
			all = append(all, tagged{v, s.cluster[i] + int32(off)})
		}
		sizes = append(sizes, s.sizes...)
		runs = append(runs, [2]int{off, len(sizes)})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].v < all[j].v })
	s := samples{values: make([]float64, len(all)), cluster: make([]int32, len(all)), sizes: sizes}
	for i, t := range all {
		s.values[i], s.cluster[i] = t.v, t.c
	}
	return pool{s: s, runs: runs}
}

// hierarchical is the two-level bootstrap interval of f(cur, base): each
// resample draws each side's runs with replacement, then each drawn run's
// requests with replacement, and computes the statistic over everything
// drawn. With one run on a side its level of runs draws that run every
// time: the interval then knows only the requests' variance, which is why
// a single run is widened by the noise floor.
func hierarchical(cur, base pool, m metric, b Bootstrap, f func(c, b float64) float64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(b.Seed, 0x9e3779b97f4a7c15))
	ec, eb := newEstimator(cur.s, m), newEstimator(base.s, m)
	wc := make([]int, len(cur.s.sizes))
	wb := make([]int, len(base.s.sizes))
	draw := func(w []int, runs [][2]int) {
		clear(w)
		for range runs {
			run := runs[rng.IntN(len(runs))]
			n := run[1] - run[0]
			for range n {
				w[run[0]+rng.IntN(n)]++
			}
		}
	}
	out := make([]float64, b.Resamples)
	for i := range out {
		draw(wc, cur.runs)
		draw(wb, base.runs)
		out[i] = f(ec.estimate(wc), eb.estimate(wb))
	}
	slices.Sort(out)
	alpha := (1 - b.Confidence) / 2
	return percentile(out, alpha), percentile(out, 1-alpha)
}

// runBootstrap is the bootstrap interval of f over the runs' values alone
// (figures with no per-request samples, such as a throughput): each
// resample draws each side's runs with replacement and compares their means.
func runBootstrap(cur, base []float64, b Bootstrap, f func(c, b float64) float64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(b.Seed, 0x9e3779b97f4a7c15))
	mean := func(xs []float64) float64 {
		sum := 0.0
		for range xs {
			sum += xs[rng.IntN(len(xs))]
		}
		return sum / float64(len(xs))
	}
	out := make([]float64, b.Resamples)
	for i := range out {
		out[i] = f(mean(cur), mean(base))
	}
	slices.Sort(out)
	alpha := (1 - b.Confidence) / 2
	return percentile(out, alpha), percentile(out, 1-alpha)
}
