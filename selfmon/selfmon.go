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
	SchedLatencyP99 time.Duration // p99 of runnable → running delay over the interval (interpolated in its bucket)
	GCCycles        uint64        // garbage collections during the interval
}

// What delayed the client's goroutines, when something did (Report.Delay).
const (
	// DelayCPUBound: llmbench used nearly all its cores; its own work
	// delayed its timestamps. A bigger machine or a sharded run helps.
	DelayCPUBound = "cpu_bound"
	// DelayHost: llmbench's goroutines waited to run although it used
	// little CPU: other processes on the host took the cores. A quieter
	// host (or CPUs set aside for llmbench) helps; more llmbench does not.
	DelayHost = "host_delayed"
)

// Thresholds of Delay: the CPU share past which llmbench is CPU-bound, and
// the scheduler delay past which its timestamps are late enough to say.
const (
	cpuBound      = 0.9
	lateScheduler = 5 * time.Millisecond
)

// Delay says what, if anything, delayed the client's timestamps: "" when
// nothing did, DelayCPUBound when llmbench itself kept its cores busy,
// DelayHost when its goroutines waited to run while it used little CPU.
func (r Report) Delay() string {
	switch {
	case r.CPUUtilization > cpuBound:
		return DelayCPUBound
	case r.SchedLatencyP99 > lateScheduler:
		return DelayHost
	}
	return ""
}

// Saturated reports whether the client itself was the bottleneck (CPU-bound);
// a host that delayed it is Delay's DelayHost, not the client's doing.
func (r Report) Saturated() bool { return r.Delay() == DelayCPUBound }

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
// histograms, interpolated linearly inside the bucket where it falls (a
// bucket's upper edge would read 4.19 ms as 5 ms); +Inf buckets report their
// lower bound.
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
		n := after.Counts[i] - before.Counts[i]
		if seen+n >= rank {
			lower, upper := after.Buckets[i], after.Buckets[i+1]
			switch {
			case math.IsInf(upper, 1):
				return seconds(lower)
			case math.IsInf(lower, -1):
				return seconds(upper)
			}
			return seconds(lower + (upper-lower)*float64(rank-seen)/float64(n))
		}
		seen += n
	}
	return 0
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

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
