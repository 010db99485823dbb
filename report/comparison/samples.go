package comparison

import (
	"slices"
	"time"

	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/gates"
)

// Samples are one run's client latencies over its measured phases, in
// seconds and sorted, for a renderer that draws their distributions
// (compare --format html overlays the runs' CDFs). They stay out of the
// JSON: its shape is the documented schema.
type Samples struct {
	TTFT, ITL, E2E []float64
}

// samplesOf reads a run's successful measured requests (gates.Run holds
// only those). The ITLs come from the records' chunks, or from the
// digest's sketch when they were read without them (as report.Build does).
func samplesOf(r gates.Run) Samples {
	var s Samples
	var itls []time.Duration
	for i := range r.Records {
		rec := &r.Records[i]
		if !rec.OK() {
			continue
		}
		if d, ok := rec.TTFT(); ok {
			s.TTFT = append(s.TTFT, d.Seconds())
		}
		s.E2E = append(s.E2E, rec.E2E().Seconds())
		if r.Digest == nil {
			itls = rec.ITLs(itls)
		}
	}
	for _, d := range itls {
		s.ITL = append(s.ITL, d.Seconds())
	}
	if r.Digest != nil {
		s.ITL = slices.Clone(r.Digest.Of(func(string) bool { return true }).ITL.Representative(report.RepresentativeITLs))
	}
	for _, xs := range [][]float64{s.TTFT, s.ITL, s.E2E} {
		slices.Sort(xs)
	}
	return s
}
