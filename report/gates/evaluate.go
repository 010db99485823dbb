package gates

import (
	"fmt"
	"math"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/chunkdigest"
)

// Status is a gate's outcome.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Inconclusive: the metric was measured, but the evidence cannot say
	// whether the bound holds: its interval straddles the limit (too few
	// requests for the rank, a regression within the noise between runs),
	// or the run (or the baseline) is not valid, or the host delayed the
	// client. The reason says what would decide it. Never a pass.
	Inconclusive Status = "inconclusive"
	// Error: the gate cannot be evaluated at all (the metric is absent from
	// the run, there is no baseline, a server quantile is unknowable above
	// its top bucket). A CI gate that cannot be checked does not pass.
	Error Status = "error"
)

// Result is one gate's verdict.
//
// Value and Baseline are the metric in the run and in the baseline run, in
// the metric's base Unit (seconds, a count, a fraction 0–1, per second, or
// 1/0 for true/false). Observed is what was compared with Limit: the value
// itself, or for a regression gate the regression as a fraction (0.12 = 12 %
// worse than the baseline); Interval is then its bootstrap confidence
// interval. Infinite regressions (from a zero baseline) are stored as
// ±math.MaxFloat64 so a Result always encodes as JSON.
type Result struct {
	Gate       string      `json:"gate"` // the expression as written
	Metric     string      `json:"metric"`
	Status     Status      `json:"status"`
	Unit       string      `json:"unit"` // of Value and Baseline: count | s | fraction | per_s | bool
	Value      float64     `json:"value"`
	Baseline   *float64    `json:"baseline,omitempty"`
	Op         Op          `json:"op"`
	Observed   float64     `json:"observed"`
	Limit      float64     `json:"limit"`
	Interval   *[2]float64 `json:"interval,omitempty"`
	Confidence float64     `json:"confidence,omitempty"` // the level of Interval
	// NoiseFloor is how far Interval was widened on each side for the
	// run-to-run noise a single run cannot show (a fraction of the
	// baseline; docs/decisions/0034), and FloorFrom where it came from.
	NoiseFloor float64 `json:"noise_floor,omitempty"`
	FloorFrom  string  `json:"noise_floor_from,omitempty"`
	// Runs and BaselineRuns are how many runs each side had (trials of a
	// set, a baseline history).
	Runs         int    `json:"runs,omitempty"`
	BaselineRuns int    `json:"baseline_runs,omitempty"`
	Reason       string `json:"reason"` // one line, for people
	// ToDecide says, for an inconclusive gate, what evidence would decide it.
	ToDecide string `json:"to_decide,omitempty"`
}

// Run is one run's evidence for the gates: its summary, and the raw records
// of its measured phases (nil when only the summary is at hand; regression
// gates then compare point estimates, without a confidence interval).
type Run struct {
	ID      string // for reports; the summary's run id when empty
	Summary report.Summary
	Records []client.Record
	// Digest is what the records' chunks were digested into when they were
	// read without them (rundir.ReadRequests), over the measured phases
	// only: ITL intervals then resample its deterministic sample of
	// requests (chunkdigest.Reservoir). nil: the records have their chunks.
	Digest *chunkdigest.Digest
}

func (r Run) id() string {
	if r.ID != "" {
		return r.ID
	}
	return r.Summary.Run.ID
}

// Evaluate checks every gate against the summary s, and base for the gates
// that compare against a baseline (nil: those gates report Error). It only
// reads its arguments; without records, regressions compare point estimates
// widened by the default noise floor.
func (gs Gates) Evaluate(s report.Summary, base *report.Summary) []Result {
	var b *Run
	if base != nil {
		b = &Run{Summary: *base}
	}
	return gs.EvaluateRuns(Run{Summary: s}, b, DefaultBootstrap)
}

// EvaluateRuns checks every gate of one run against one baseline run (nil:
// none): EvaluateSides with a side of one run each and no noise floor
// learned on this machine, so regressions are widened by DefaultFloor.
func (gs Gates) EvaluateRuns(cur Run, base *Run, b Bootstrap) []Result {
	var bs Side
	if base != nil {
		bs = Side{*base}
	}
	return gs.EvaluateSides(Side{cur}, bs, Options{Bootstrap: b})
}

// EvaluateSides checks every gate against the runs of cur (one run, or the
// trials of a set), and the gates that compare with a baseline against the
// runs of base (one run, a trial set, or a history; empty: those gates
// report Error). Every gate is three-valued (docs/decisions/0034): an
// absolute gate is decided by the metric's confidence interval over the
// run's requests, a regression by a bootstrap over runs and then requests,
// widened by the noise floor when a side has a single run. Deterministic:
// the same runs and options give the same results.
func (gs Gates) EvaluateSides(cur, base Side, o Options) []Result {
	o.Bootstrap = o.Bootstrap.withDefaults()
	ev := evaluator{cur: cur, base: base, opt: o, pools: map[poolKey]pool{}}
	out := make([]Result, 0, len(gs))
	for _, g := range gs {
		out = append(out, ev.gate(g))
	}
	return out
}

type evaluator struct {
	cur, base Side
	opt       Options
	pools     map[poolKey]pool // extracted once per side, family and phase
}

func (ev *evaluator) gate(g Gate) Result {
	r := Result{Gate: g.Expr, Metric: g.Metric, Op: g.Op, Status: Error, Runs: len(ev.cur)}
	if r.Gate == "" {
		r.Gate = g.String()
	}
	m, ok := lookupMetric(g.Metric)
	if !ok {
		r.Reason = fmt.Sprintf("unknown metric %s", g.Metric)
		return r
	}
	if len(ev.cur) == 0 {
		r.Reason = "no run to gate"
		return r
	}
	r.Unit = m.unit.String()
	cur, why := readSide(m, ev.cur)
	if why != "" {
		r.Reason = fmt.Sprintf("%s is absent: %s", g.Metric, why)
		return r
	}
	r.Value = ev.point(m, ev.cur, cur, false)

	if !g.NeedsBaseline() {
		return ev.fit(ev.absolute(r, m, cur, g.RHS.Value.Value(), g.RHS.Value.String()), m, false)
	}
	if len(ev.base) == 0 {
		r.Reason = "needs a baseline run to compare with (--baseline)"
		return r
	}
	r.BaselineRuns = len(ev.base)
	bv, why := readSide(m, ev.base)
	if why != "" {
		r.Reason = fmt.Sprintf("%s is absent from the baseline run: %s", g.Metric, why)
		return r
	}
	basePoint := ev.point(m, ev.base, bv, true)
	r.Baseline = &basePoint
	for _, b := range bv {
		if b.aboveTop {
			r.Reason = fmt.Sprintf("the baseline's %s lies above the top bucket (> %s): unknowable", g.Metric, m.unit.format(b.v))
			return r
		}
	}
	if noisy(m, g) {
		for _, c := range cur {
			if c.aboveTop {
				r.Reason = fmt.Sprintf("the run's %s lies above the top bucket (> %s): unknowable", g.Metric, m.unit.format(c.v))
				return r
			}
		}
		return ev.fit(ev.contrast(r, g, m, r.Value, basePoint), m, true)
	}
	// Counts and true/false are what happened, exactly: compared as they are.
	limit := basePoint
	var how string
	switch v := g.RHS.Value.Value(); g.RHS.Arith {
	case Times:
		limit *= v
		how = fmt.Sprintf("baseline %s × %s", m.unit.format(basePoint), g.RHS.Value)
	case Plus:
		limit += v
		how = fmt.Sprintf("baseline %s + %s", m.unit.format(basePoint), g.RHS.Value)
	case Minus:
		limit -= v
		how = fmt.Sprintf("baseline %s − %s", m.unit.format(basePoint), g.RHS.Value)
	default:
		how = "baseline"
	}
	if g.Regression {
		return ev.fit(ev.exactRegression(r, g, m, basePoint), m, true)
	}
	return ev.fit(ev.compare(r, m, reading{v: r.Value}, limit, m.unit.format(limit), how), m, true)
}

// readSide reads m in every run of a side; why says why it is absent from
// one (naming the trial when the side has several).
func readSide(m metric, side Side) ([]reading, string) {
	out := make([]reading, len(side))
	for i := range side {
		out[i] = m.read(&side[i].Summary)
		if out[i].absent != "" {
			if len(side) > 1 {
				return nil, fmt.Sprintf("run %d of %d (%s): %s", i+1, len(side), side[i].id(), out[i].absent)
			}
			return nil, out[i].absent
		}
	}
	return out, ""
}

// point is a side's value of m: a single run's own; over several runs, the
// statistic of their requests pooled when every run has its records (what
// the bootstrap resamples), else the mean of the runs' values.
func (ev *evaluator) point(m metric, side Side, rs []reading, base bool) float64 {
	if len(rs) == 1 {
		return rs[0].v
	}
	if p, ok := ev.pool(m, side, base); ok {
		return p.s.statistic(m.p, m.stat == "mean", ones(len(p.s.sizes)))
	}
	sum := 0.0
	for _, r := range rs {
		sum += r.v
	}
	return sum / float64(len(rs))
}

func ones(n int) []int {
	w := make([]int, n)
	for i := range w {
		w[i] = 1
	}
	return w
}

// compare decides value op limit, exactly: a count, a true/false, a value
// with no interval. A server quantile above the top bucket is only a lower
// bound: it decides the gate only when the bound already does.
func (ev *evaluator) compare(r Result, m metric, cur reading, limit float64, limitText, how string) Result {
	r.Observed, r.Limit = cur.v, limit
	if how != "" {
		limitText += " (" + how + ")"
	}
	obs := m.unit.format(cur.v)
	if r.Op.holds(cur.v, limit) {
		r.Status = Pass
		r.Reason = fmt.Sprintf("%s %s %s", obs, r.Op, limitText)
	} else {
		r.Status = Fail
		r.Reason = fmt.Sprintf("%s is not %s %s", obs, r.Op, limitText)
	}
	return r
}

// exactRegression decides a regression of a count, which is what happened
// and has no noise to model.
func (ev *evaluator) exactRegression(r Result, g Gate, m metric, base float64) Result {
	allowed := g.RHS.Value.Value()
	point := regression(r.Value, base, m.better)
	r.Observed, r.Limit = finite(point), allowed
	change := fmt.Sprintf("%s (baseline %s → %s)", signedPct(point), m.unit.format(base), m.unit.format(r.Value))
	limit := fmt.Sprintf("%s %s", g.Op, signedPct(allowed))
	r.Status, r.Reason = Pass, fmt.Sprintf("%s: within %s (point estimate; a count is exact)", change, limit)
	if !g.Op.holds(point, allowed) {
		r.Status, r.Reason = Fail, fmt.Sprintf("%s: beyond %s (point estimate; a count is exact)", change, limit)
	}
	return r
}

// samplesOf is the run's samples of m's family in m's phase: ITLs from the
// digest's sample of requests when the records were read without chunks.
func (r Run) samplesOf(m metric) samples {
	if m.family == itlSamples && r.Digest != nil {
		sampled := r.Digest.Of(func(phase string) bool { return m.phase == "" || phase == m.phase }).Sample.Requests()
		return itlSamplesOf(sampled)
	}
	return samplesOf(inPhase(r.Records, m.phase), m.family)
}

// inPhase is the records of one phase ("": all of them).
func inPhase(records []client.Record, phase string) []client.Record {
	if phase == "" {
		return records
	}
	var out []client.Record
	for _, r := range records {
		if r.Phase == phase {
			out = append(out, r)
		}
	}
	return out
}

func signedPct(f float64) string {
	if math.IsInf(f, 0) {
		if f > 0 {
			return "+∞%"
		}
		return "−∞%"
	}
	return fmt.Sprintf("%+.1f%%", 100*f)
}

// finite keeps a Result encodable as JSON.
func finite(f float64) float64 {
	switch {
	case math.IsInf(f, 1):
		return math.MaxFloat64
	case math.IsInf(f, -1):
		return -math.MaxFloat64
	case math.IsNaN(f):
		return 0
	}
	return f
}

// Passed reports whether every result passed.
func Passed(rs []Result) bool {
	for _, r := range rs {
		if r.Status != Pass {
			return false
		}
	}
	return true
}
