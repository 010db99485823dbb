package gates

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmbench-org/llmbench/internal/interval"
	"github.com/llmbench-org/llmbench/report"
)

// absolute decides metric op limit for the runs of the current side. A
// figure estimated from a sample (a latency quantile or mean, a failure or
// goodput fraction, a server quantile known to its bucket) is decided by its
// confidence interval: pass when the whole interval meets the limit, fail
// when none of it does, inconclusive when it straddles. Counts and other
// figures that are what happened are compared as they are. Over several
// runs (a trial set) each run is decided alone: one that fails fails the
// gate, all passing pass it, anything else is inconclusive.
func (ev *evaluator) absolute(r Result, m metric, cur []reading, limit float64, limitText string) Result {
	if len(cur) == 1 {
		return ev.absoluteOne(r, m, ev.cur[0], cur[0], limit, limitText)
	}
	var passed int
	var undecided *Result
	for i, c := range cur {
		one := ev.absoluteOne(r, m, ev.cur[i], c, limit, limitText)
		one.Reason = fmt.Sprintf("run %d of %d (%s): %s", i+1, len(cur), ev.cur[i].id(), one.Reason)
		switch one.Status {
		case Fail:
			one.Value = r.Value
			return one
		case Pass:
			passed++
		default:
			if undecided == nil {
				undecided = &one
			}
		}
	}
	if undecided != nil {
		undecided.Value, undecided.Status = r.Value, Inconclusive
		return *undecided
	}
	r.Status, r.Observed, r.Limit = Pass, r.Value, limit
	r.Reason = fmt.Sprintf("all %d runs: %s %s %s", passed, m.unit.format(r.Value), r.Op, limitText)
	return r
}

// absoluteOne decides the gate on one run.
func (ev *evaluator) absoluteOne(r Result, m metric, run Run, cur reading, limit float64, limitText string) Result {
	r.Value, r.Observed, r.Limit = cur.v, cur.v, limit
	iv, from, ok := valueInterval(m, run, cur)
	if !ok && from == summaryPoint {
		r = ev.compare(r, m, cur, limit, limitText, "")
		r.Reason += " (" + summaryPoint + ")"
		return r
	}
	if !ok {
		if from != "" { // an estimate the summary alone cannot bound
			r.Status = Inconclusive
			r.Reason = fmt.Sprintf("%s %s %s cannot be decided: %s", m.unit.format(cur.v), r.Op, limitText, from)
			r.ToDecide = "the run directory with its records (the summary alone has no interval), or more requests"
			return r
		}
		return ev.compare(r, m, cur, limit, limitText, "")
	}
	obs := m.unit.format(cur.v)
	if cur.aboveTop {
		obs = "> " + obs + " (above the top bucket)"
	}
	ivText := fmt.Sprintf("%s %s … %s", from, m.unit.format(iv.Lo), m.unit.format(iv.Hi))
	if cur.hasBucket && !cur.aboveTop {
		ivText = fmt.Sprintf("bucket %s–%s", m.unit.format(iv.Lo), m.unit.format(iv.Hi))
	}
	if math.IsInf(iv.Hi, 1) {
		ivText = fmt.Sprintf("%s %s … unbounded", from, m.unit.format(iv.Lo))
	}
	if math.IsInf(iv.Lo, -1) {
		ivText = strings.Replace(ivText, m.unit.format(iv.Lo), "unbounded", 1)
	}
	if iv.Bounded() || cur.aboveTop || !math.IsInf(iv.Lo, 0) || !math.IsInf(iv.Hi, 0) {
		r.Interval, r.Confidence = &[2]float64{finite(iv.Lo), finite(iv.Hi)}, interval.Confidence
	}
	switch decide(iv, func(x float64) bool { return r.Op.holds(x, limit) }) {
	case interval.Pass:
		r.Status = Pass
		r.Reason = fmt.Sprintf("%s %s %s (%s: wholly within)", obs, r.Op, limitText, ivText)
	case interval.Fail:
		r.Status = Fail
		r.Reason = fmt.Sprintf("%s is not %s %s (%s: wholly beyond)", obs, r.Op, limitText, ivText)
	default:
		r.Status = Inconclusive
		r.Reason = fmt.Sprintf("%s against %s %s: %s straddles the limit", obs, r.Op, limitText, ivText)
		if cur.aboveTop {
			r.Reason = fmt.Sprintf("%s %s %s cannot be decided: the engine's histogram ends below the limit", obs, r.Op, limitText)
			r.ToDecide = "an engine histogram whose buckets reach past the limit"
			return r
		}
		r.ToDecide = toDecideAbsolute(m, iv)
	}
	return r
}

// summaryPoint says a quantile was decided by its value: the run's summary
// is all there is, and its sample bounds the quantile's rank on both sides.
const summaryPoint = "the summary alone, no interval: its point value decides, its sample bounding the rank"

// valueInterval is the confidence interval of the figure m reads in run,
// with words for where it came from. ok false with from empty: the figure is
// exact (a count, a rate of counts, a gauge); ok false with from
// summaryPoint: a quantile the summary alone gives by its value; ok false
// with another from: an estimate the summary alone cannot bound, and why.
func valueInterval(m metric, run Run, cur reading) (iv interval.Interval, from string, ok bool) {
	conf := interval.Confidence
	switch {
	case cur.hasBucket:
		// The engine's histogram says only which bucket the quantile is in.
		if cur.aboveTop {
			return interval.Interval{Lo: cur.v, Hi: math.Inf(1)}, "the histogram's bucket", true
		}
		return interval.Interval{Lo: cur.bucket[0], Hi: cur.bucket[1]}, "the histogram's bucket", true
	case m.family != noSamples && m.stat != "":
		if run.hasSamples(m) {
			s := run.samplesOf(m)
			if m.stat == "mean" {
				mean, sd := meanSD(s.values)
				return interval.Mean(mean, sd, len(s.values), conf), fmt.Sprintf("95%% interval of the mean over %d samples", len(s.values)), true
			}
			return interval.Quantile(m.p, conf, s.values), fmt.Sprintf("95%% order-statistic interval over %d samples", len(s.values)), true
		}
		if m.dist == nil {
			return interval.Interval{}, "", false
		}
		d := m.dist(&run.Summary)
		if m.stat == "mean" {
			return interval.Mean(d.Mean, d.StdDev, d.N, conf), fmt.Sprintf("95%% t interval of the mean over %d samples (from the summary)", d.N), true
		}
		lo, hi := interval.QuantileRanks(m.p, conf, d.N)
		if lo < 1 || hi > d.N {
			return interval.Interval{}, fmt.Sprintf("%d samples are too few to bound a %s at 95%% (the summary alone)", d.N, m.stat), false
		}
		// The ranks are inside the sample, but the summary keeps no value
		// at them: the point value decides, and the reason says so.
		return interval.Interval{}, summaryPoint, false
	}
	switch inner := innerName(m.name); inner {
	case "client.error_rate":
		q := run.Summary.Client.Requests
		if m.phase != "" {
			q = phaseClient(run, m.phase).Requests
		}
		return interval.Proportion(q.Failed, q.Sent-q.Canceled, conf), fmt.Sprintf("Wilson 95%% interval over %d requests", q.Sent-q.Canceled), true
	case "client.goodput.fraction":
		c := run.Summary.Client
		if m.phase != "" {
			c = phaseClient(run, m.phase)
		}
		if c.Goodput == nil {
			return interval.Interval{}, "", false
		}
		n := c.Requests.Sent - c.Requests.Canceled - c.Goodput.Unmeasured
		return interval.Proportion(c.Goodput.Good, n, conf), fmt.Sprintf("Wilson 95%% interval over %d requests", n), true
	}
	return interval.Interval{}, "", false
}

// decide is interval.Decide, with an interval that is not a number (no
// sample behind a statistic) inconclusive rather than a fail.
func decide(iv interval.Interval, holds func(float64) bool) interval.Verdict {
	if math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi) {
		return interval.Inconclusive
	}
	return interval.Decide(iv, holds)
}

// toDecideAbsolute says what would decide an absolute gate whose interval
// straddles its limit.
func toDecideAbsolute(m metric, iv interval.Interval) string {
	if m.stat != "" && m.stat != "mean" && m.p > 0 && (math.IsInf(iv.Hi, 1) || math.IsInf(iv.Lo, -1)) {
		return fmt.Sprintf("more requests: a %s is bounded on both sides at 95%% from %d samples", m.stat, quantileSampleFloor(m.p))
	}
	return "more requests (a narrower interval), or a limit the figure is not so near"
}

// quantileSampleFloor is the fewest samples whose order statistics bound
// the p-quantile on both sides at the reporting confidence.
func quantileSampleFloor(p float64) int {
	for n := 1; n < 1_000_000; n = max(n+1, n*11/10) {
		if lo, hi := interval.QuantileRanks(p, interval.Confidence, n); lo >= 1 && hi <= n {
			// Step back to the smallest such n.
			for k := n - 1; k > 0; k-- {
				if lo, hi := interval.QuantileRanks(p, interval.Confidence, k); lo < 1 || hi > k {
					return k + 1
				}
			}
			return n
		}
	}
	return 1_000_000
}

func meanSD(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, math.NaN()
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// innerName is a metric's name without its phase[NAME]. prefix.
func innerName(name string) string {
	if _, inner, ok := splitPhase(name); ok {
		return inner
	}
	return name
}

// hasSamples reports whether the run carries the raw samples of m's family.
func (r Run) hasSamples(m metric) bool {
	if m.family == itlSamples && r.Digest != nil {
		return true
	}
	return r.Records != nil
}

// phaseClient is one phase's client view.
func phaseClient(r Run, phase string) report.ClientSide {
	for _, ph := range r.Summary.Phases {
		if ph.Name == phase {
			return ph.Client
		}
	}
	return report.ClientSide{}
}
