// Package selfmon measures the load generator itself: the CPU it used and how
// long its goroutines waited to run. A client whose cores are saturated
// timestamps late, so every run states these numbers beside its latencies.
package selfmon

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

const (
	schedMetric    = "/sched/latencies:seconds"
	gcCyclesMetric = "/gc/cycles/total:gc-cycles"
)

// Sample is the process's counters at one instant.
type Sample struct {
	wall     time.Time
	cpu      time.Duration // user + system CPU time of the process
	sched    *metrics.Float64Histogram
	gcCycles uint64
}

// Take reads the counters now.
func Take() Sample {
	s := Sample{wall: time.Now(), cpu: processCPU()}
	m := []metrics.Sample{{Name: schedMetric}, {Name: gcCyclesMetric}}
	metrics.Read(m)
	if m[0].Value.Kind() == metrics.KindFloat64Histogram {
		s.sched = m[0].Value.Float64Histogram()
	}
	if m[1].Value.Kind() == metrics.KindUint64 {
		s.gcCycles = m[1].Value.Uint64()
	}
	return s
}

// Report is what happened between two samples.
type Report struct {
	Cores           int           // GOMAXPROCS
	CPUUtilization  float64       // CPU time ÷ (wall × cores), 0–1
	SchedLatencyP99 time.Duration // p99 of runnable → running delay over the interval (bucket upper bound)
	GCCycles        uint64        // garbage collections during the interval
}

// Saturated reports whether the client was likely a bottleneck: its cores
// were nearly all busy, or goroutines waited long to be scheduled (which
// delays the timestamp taken when a chunk arrives).
func (r Report) Saturated() bool {
	return r.CPUUtilization > 0.9 || r.SchedLatencyP99 > 5*time.Millisecond
}

// Since compares a later sample with an earlier one.
func Since(before, after Sample) Report {
	r := Report{Cores: runtime.GOMAXPROCS(0)}
	if wall := after.wall.Sub(before.wall); wall > 0 && r.Cores > 0 {
		r.CPUUtilization = float64(after.cpu-before.cpu) / float64(wall) / float64(r.Cores)
	}
	r.GCCycles = after.gcCycles - before.gcCycles
	if before.sched != nil && after.sched != nil {
		r.SchedLatencyP99 = histQuantile(before.sched, after.sched, 0.99)
	}
	return r
}

// histQuantile reads quantile q of the difference of two cumulative runtime
// histograms, reporting the upper bound of the bucket where it falls (an
// honest over-estimate; +Inf buckets report their lower bound).
func histQuantile(before, after *metrics.Float64Histogram, q float64) time.Duration {
	if len(before.Counts) != len(after.Counts) {
		return 0
	}
	var total uint64
	for i := range after.Counts {
		total += after.Counts[i] - before.Counts[i]
	}
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i := range after.Counts {
		seen += after.Counts[i] - before.Counts[i]
		if seen >= rank {
			upper := after.Buckets[i+1]
			if math.IsInf(upper, 1) {
				upper = after.Buckets[i]
			}
			return time.Duration(upper * float64(time.Second))
		}
	}
	return 0
}

// DefaultMemoryLimit is the heap size at which the garbage collector runs
// during a measurement when the user has not configured it (QuietGC).
const DefaultMemoryLimit = 1 << 30

// QuietGC keeps the garbage collector out of a measurement: instead of
// collecting each time the heap doubles (many times a second when thousands
// of chunks stream through a small heap, each cycle taking CPU from the
// goroutines that timestamp chunks), it collects only when the heap reaches
// DefaultMemoryLimit. A user who set GOGC or GOMEMLIMIT keeps their setting.
// It returns a function that restores the previous policy, and whether it
// changed anything.
func QuietGC(getenv func(string) string) (restore func(), changed bool) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}, false
	}
	oldPercent := debug.SetGCPercent(-1)
	oldLimit := debug.SetMemoryLimit(DefaultMemoryLimit)
	return func() {
		debug.SetMemoryLimit(oldLimit)
		debug.SetGCPercent(oldPercent)
	}, true
}
