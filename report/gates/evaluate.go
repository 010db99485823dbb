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
	// Error: the gate could not be decided (the metric is absent from the
	// run, there is no baseline, a server quantile is unknowable above its
	// top bucket). A CI gate that cannot be checked does not pass.
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
	Reason     string      `json:"reason"`               // one line, for people
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
// reads its arguments; regression gates compare point estimates.
func (gs Gates) Evaluate(s report.Summary, base *report.Summary) []Result {
	var b *Run
	if base != nil {
		b = &Run{Summary: *base}
	}
	return gs.EvaluateRuns(Run{Summary: s}, b, DefaultBootstrap)
}

// EvaluateRuns checks every gate like Evaluate; when both runs carry their
// records, a regression gate on a latency statistic fails only when the
// whole bootstrap confidence interval of the regression lies beyond the
// allowed one. Deterministic: the same runs and b give the same results.
func (gs Gates) EvaluateRuns(cur Run, base *Run, b Bootstrap) []Result {
	ev := evaluator{cur: cur, base: base, boot: b.withDefaults(),
		curSamples: map[sampleKey]samples{}, baseSamples: map[sampleKey]samples{}}
	out := make([]Result, 0, len(gs))
	for _, g := range gs {
		out = append(out, ev.gate(g))
	}
	return out
}

type evaluator struct {
	cur         Run
	base        *Run
	boot        Bootstrap
	curSamples  map[sampleKey]samples // extracted once per family, phase and run
	baseSamples map[sampleKey]samples
}

// sampleKey names the samples behind a metric: a family, over the run's
// measured phases ("") or one phase.
type sampleKey struct {
	family family
	phase  string
}

func (ev *evaluator) gate(g Gate) Result {
	r := Result{Gate: g.Expr, Metric: g.Metric, Op: g.Op, Status: Error}
	if r.Gate == "" {
		r.Gate = g.String()
	}
	m, ok := lookupMetric(g.Metric)
	if !ok {
		r.Reason = fmt.Sprintf("unknown metric %s", g.Metric)
		return r
	}
	r.Unit = m.unit.String()
	cur := m.read(&ev.cur.Summary)
	if cur.absent != "" {
		r.Reason = fmt.Sprintf("%s is absent: %s", g.Metric, cur.absent)
		return r
	}
	r.Value = cur.v

	if !g.NeedsBaseline() {
		return ev.compare(r, m, cur, g.RHS.Value.Value(), g.RHS.Value.String(), "")
	}
	if ev.base == nil {
		r.Reason = "needs a baseline run to compare with (--baseline)"
		return r
	}
	bv := m.read(&ev.base.Summary)
	if bv.absent != "" {
		r.Reason = fmt.Sprintf("%s is absent from the baseline run: %s", g.Metric, bv.absent)
		return r
	}
	r.Baseline = &bv.v
	if bv.aboveTop {
		r.Reason = fmt.Sprintf("the baseline's %s lies above the top bucket (> %s): unknowable", g.Metric, m.unit.format(bv.v))
		return r
	}
	if g.Regression {
		return ev.regression(r, g, m, cur, bv)
	}
	limit := bv.v
	var how string
	switch v := g.RHS.Value.Value(); g.RHS.Arith {
	case Times:
		limit *= v
		how = fmt.Sprintf("baseline %s × %s", m.unit.format(bv.v), g.RHS.Value)
	case Plus:
		limit += v
		how = fmt.Sprintf("baseline %s + %s", m.unit.format(bv.v), g.RHS.Value)
	case Minus:
		limit -= v
		how = fmt.Sprintf("baseline %s − %s", m.unit.format(bv.v), g.RHS.Value)
	default:
		how = "baseline"
	}
	return ev.compare(r, m, cur, limit, m.unit.format(limit), how)
}

// compare decides value op limit. A server quantile above the top bucket is
// only a lower bound: it decides the gate only when the bound already does.
func (ev *evaluator) compare(r Result, m metric, cur reading, limit float64, limitText, how string) Result {
	r.Observed, r.Limit = cur.v, limit
	if how != "" {
		limitText += " (" + how + ")"
	}
	obs := m.unit.format(cur.v)
	if cur.aboveTop {
		obs = "> " + obs + " (above the top bucket)"
		lowerBound := cur.v
		switch {
		case (r.Op == Less || r.Op == LessEqual) && !r.Op.holds(lowerBound, limit):
			r.Status = Fail
		case (r.Op == Greater || r.Op == GreaterEqual) && r.Op.holds(lowerBound, limit):
			r.Status = Pass
		default:
			r.Reason = fmt.Sprintf("%s %s %s cannot be decided: the engine's histogram ends below the limit", obs, r.Op, limitText)
			return r
		}
	} else if r.Op.holds(cur.v, limit) {
		r.Status = Pass
	} else {
		r.Status = Fail
	}
	if cur.hasBucket && !cur.aboveTop {
		obs += fmt.Sprintf(" (bucket %s–%s)", m.unit.format(cur.bucket[0]), m.unit.format(cur.bucket[1]))
	}
	if r.Status == Pass {
		r.Reason = fmt.Sprintf("%s %s %s", obs, r.Op, limitText)
	} else {
		r.Reason = fmt.Sprintf("%s is not %s %s", obs, r.Op, limitText)
	}
	return r
}

// regression decides a regression gate: by the bootstrap interval when both
// runs have records of the metric's samples, else by the point estimate.
func (ev *evaluator) regression(r Result, g Gate, m metric, cur, base reading) Result {
	allowed := g.RHS.Value.Value()
	point := regression(cur.v, base.v, m.better)
	r.Observed, r.Limit = finite(point), allowed
	change := fmt.Sprintf("%s (baseline %s → %s)", signedPct(point), m.unit.format(base.v), m.unit.format(cur.v))
	limit := fmt.Sprintf("%s %s", g.Op, signedPct(allowed))
	if cur.aboveTop {
		r.Reason = fmt.Sprintf("the run's %s lies above the top bucket (> %s): unknowable", g.Metric, m.unit.format(cur.v))
		return r
	}
	beyond := func(x float64) bool { return !g.Op.holds(x, allowed) }

	if why := ev.noInterval(m); why != "" {
		r.Status, r.Reason = Pass, fmt.Sprintf("%s: within %s (point estimate; %s)", change, limit, why)
		if beyond(point) {
			r.Status, r.Reason = Fail, fmt.Sprintf("%s: beyond %s (point estimate; %s)", change, limit, why)
		}
		return r
	}
	cs, bs := ev.samples(m)
	lo, hi := interval(cs, bs, m, ev.boot)
	r.Interval, r.Confidence = &[2]float64{finite(lo), finite(hi)}, ev.boot.Confidence
	ci := fmt.Sprintf("%g%% CI %s … %s", 100*ev.boot.Confidence, signedPct(lo), signedPct(hi))
	switch {
	case beyond(lo): // the whole interval is beyond the allowed regression
		r.Status = Fail
		r.Reason = fmt.Sprintf("%s, %s: wholly beyond %s", change, ci, limit)
	case beyond(hi):
		r.Status = Pass
		r.Reason = fmt.Sprintf("%s, %s: straddles %s, not a significant regression", change, ci, limit)
	default:
		r.Status = Pass
		r.Reason = fmt.Sprintf("%s, %s: wholly within %s", change, ci, limit)
	}
	return r
}

// noInterval says why a regression gate falls back on the point estimate
// ("" when a bootstrap interval can be computed).
func (ev *evaluator) noInterval(m metric) string {
	switch {
	case !m.bootstrappable():
		return "no raw samples behind " + m.name
	case ev.cur.Records == nil || ev.base.Records == nil:
		return "no raw records of both runs"
	}
	cs, bs := ev.samples(m)
	if len(cs.sizes) < minClusters || len(bs.sizes) < minClusters {
		return fmt.Sprintf("too few requests for an interval (%d and %d)", len(cs.sizes), len(bs.sizes))
	}
	return ""
}

func (ev *evaluator) samples(m metric) (cur, base samples) {
	key := sampleKey{m.family, m.phase}
	cs, ok := ev.curSamples[key]
	if !ok {
		cs = ev.cur.samplesOf(m)
		ev.curSamples[key] = cs
	}
	bs, ok := ev.baseSamples[key]
	if !ok {
		bs = ev.base.samplesOf(m)
		ev.baseSamples[key] = bs
	}
	return cs, bs
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
