package report

import (
	"math"

	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/workload"
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
		}
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
	in := make([]workload.SweepPoint, len(pts))
	for i, p := range pts {
		q := p.QueueMean
		if q < 0 {
			q = math.NaN()
		}
		in[i] = workload.SweepPoint{Phase: p.Phase, Load: p.Load, Throughput: p.RequestsPerS, Latency: p.TTFTp50, Queue: q}
	}
	sat := workload.DetectSaturation(in)
	return &SweepResult{Points: pts, Saturation: Saturation{
		Found: sat.Found, Phase: sat.Phase, Load: sat.Load, Capacity: sat.Capacity, Reason: sat.Reason,
	}}
}
