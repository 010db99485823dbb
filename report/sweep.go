package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmbench-org/llmbench/report/saturation"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// sweepOf lines up two or more measured phases by offered load and detects
// saturation; nil for a single measured phase. A phase without a recorded
// load uses the rate it actually offered (requests sent per second).
func sweepOf(phases []PhaseResult) *SweepResult {
	var pts []SweepPoint
	for _, ph := range phases {
		if !ph.Measured {
			continue
		}
		p := SweepPoint{
			Phase: ph.Name, Load: ph.Load, LoadUnit: ph.LoadUnit,
			RequestsPerS: ph.Client.Throughput.RequestsPerSec, OutputTokPerS: ph.Client.Throughput.OutputTokensPerSec,
			TTFTp50: ph.Client.Latency.TTFT.P50, TTFTp99: ph.Client.Latency.TTFT.P99, QueueMean: -1,
			ITLp50: ph.Client.Latency.ITL.P50, ITLp99: ph.Client.Latency.ITL.P99,
			TPOTp50: ph.Client.Latency.TPOT.P50, TPOTp99: ph.Client.Latency.TPOT.P99,
			E2Ep50: ph.Client.Latency.E2E.P50, E2Ep99: ph.Client.Latency.E2E.P99,
			OutputTokPerSPerUser: perUser(ph.Client),
		}
		if g := ph.Client.Goodput; g != nil {
			p.GoodputPerS = &g.RequestsPerS
			if g.FractionCI != nil {
				p.GoodFraction, p.GoodFractionCI = &g.Fraction, g.FractionCI
			}
		}
		pointIntervals(&p, ph.Client.Latency)
		if p.Load == 0 && ph.Duration > 0 {
			p.Load, p.LoadUnit = float64(ph.Client.Requests.Sent)/ph.Duration, "requests/s (offered)"
		}
		if ph.Server != nil {
			if g, ok := ph.Server.Gauges[string(scrape.RequestsWaiting)]; ok {
				p.QueueMean = g.Mean
			}
		}
		pts = append(pts, p)
	}
	if len(pts) < 2 {
		return nil
	}
	// Loads in different units (an automatic sweep's closed-loop baseline
	// and probe beside its open-loop rates) cannot be ordered together:
	// saturation is read among the points of the most common unit.
	unit, count := "", map[string]int{}
	for _, p := range pts {
		count[p.LoadUnit]++
		if count[p.LoadUnit] > count[unit] || (count[p.LoadUnit] == count[unit] && p.LoadUnit == "requests/s") {
			unit = p.LoadUnit
		}
	}
	var in []saturation.Point
	var left []string
	best := SweepPoint{}
	for _, p := range pts {
		if p.RequestsPerS > best.RequestsPerS {
			best = p
		}
		if p.LoadUnit != unit {
			left = append(left, p.Phase)
			continue
		}
		q := p.QueueMean
		if q < 0 {
			q = math.NaN()
		}
		in = append(in, saturation.Point{Phase: p.Phase, Load: p.Load, Throughput: p.RequestsPerS, Latency: p.TTFTp50, Queue: q})
	}
	sat := saturation.Detect(in)
	if len(left) > 0 {
		sat.Reason += fmt.Sprintf("; compared the %d points offered in %s, not %s (another unit)", len(in), unit, strings.Join(left, ", "))
	}
	if !sat.Found && best.Phase != "" {
		sat.Reason += fmt.Sprintf("; the highest throughput measured was %.2f requests/s, at %s", best.RequestsPerS, best.Phase)
	}
	res := &SweepResult{Points: pts, Saturation: Saturation{
		Found: sat.Found, Phase: sat.Phase, Load: sat.Load, Capacity: sat.Capacity, Reason: sat.Reason,
	}}
	for _, p := range pts {
		if g := p.GoodputPerS; g != nil && (res.GoodputPeak == nil || *g > res.GoodputPeak.RequestsPerS) {
			res.GoodputPeak = &GoodputPeak{Phase: p.Phase, Load: p.Load, LoadUnit: p.LoadUnit, RequestsPerS: *g}
		}
	}
	return res
}

// pointIntervals copies the intervals of the point's quantiles from the
// phase's distributions.
func pointIntervals(p *SweepPoint, lat Latencies) {
	for _, l := range []struct {
		key string
		d   Dist
	}{{"ttft", lat.TTFT}, {"itl", lat.ITL}, {"tpot", lat.TPOT}, {"e2e", lat.E2E}} {
		if l.d.N == 0 {
			continue
		}
		if p.N == nil {
			p.N = map[string]int{}
		}
		p.N[l.key] = l.d.N
		for _, q := range []float64{50, 99} {
			iv, ok := l.d.QuantileCI(q)
			if !ok {
				continue
			}
			if p.CI == nil {
				p.CI = map[string]Bounds{}
			}
			name := SweepQuantileKey(l.key, q)
			p.CI[name] = boundsOf(iv)
			if !iv.Bounded() {
				p.TooFew = append(p.TooFew, name)
			}
		}
	}
}

// SweepQuantileKey names a sweep point's quantile as its JSON field does:
// ("ttft", 99) → "ttft_p99_s".
func SweepQuantileKey(latency string, p float64) string {
	return latency + "_" + rundir.PercentileName(p) + "_s"
}

// Interval is the point's interval of a quantile (SweepQuantileKey), and
// whether it has one.
func (p SweepPoint) Interval(latency string, q float64) (Bounds, bool) {
	b, ok := p.CI[SweepQuantileKey(latency, q)]
	return b, ok
}

// String is the peak in words.
func (g GoodputPeak) String() string {
	return fmt.Sprintf("goodput peaks at %s (offered %.4g %s): %.2f requests/s within the SLO", g.Phase, g.Load, g.LoadUnit, g.RequestsPerS)
}

// perUser is the output rate of one request in flight: the successful
// requests' output tokens over the time they were in flight (Σ E2E), equal
// to the phase's output tokens/s ÷ its mean requests in flight (Little's law).
func perUser(c ClientSide) float64 {
	inFlight := c.Latency.E2E.Mean * float64(c.Latency.E2E.N)
	if inFlight <= 0 || math.IsNaN(inFlight) {
		return 0
	}
	return float64(c.Tokens.Output) / inFlight
}
