// Package selfmon measures the load generator itself: the CPU it used, how
// long its goroutines waited to run, and how much of the machine other
// processes used meanwhile. A client whose cores are saturated, by itself or
// by its neighbours, timestamps late, so every run states these numbers
// beside its latencies.
package selfmon

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
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

	// The machine's CPU-seconds busy and this process's, in the same
	// ticks, and its online CPUs; hostOK is false where they are not
	// measured (off Linux).
	hostBusy, hostSelf float64
	hostCores          int
	hostOK             bool

	// The process's cgroup's CPU throttling; cgroupOK is false where
	// there is no CPU controller to read (off Linux, cgroup v2 without it).
	cgroup   cgroupCPU
	cgroupOK bool
}

// Take reads the counters now.
func Take() Sample {
	s := Sample{wall: time.Now(), cpu: processCPU()}
	s.hostBusy, s.hostSelf, s.hostCores, s.hostOK = hostCPU()
	s.cgroup, s.cgroupOK = cgroupSample()
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

	// The machine around the process over the interval, as shares of all
	// its CPUs (0–1): HostOtherCPU is what every other process used (a
	// built-in engine in its child process, or a real engine on the same
	// host, included), HostSelfCPU this process. HostMeasured is false
	// where the platform does not say (off Linux); then both are 0 and
	// mean nothing.
	HostCores    int
	HostOtherCPU float64
	HostSelfCPU  float64
	HostMeasured bool

	// The CPU limit of the process's cgroup (a container's, a pod's) and
	// how it stopped the process over the interval: ThrottledPeriods CFS
	// periods in which the quota ran out, Throttled the time every thread
	// stood still for it. CPUQuota is in cores, 0 for no limit.
	// CgroupMeasured is false where no CPU controller could be read.
	CPUQuota         float64
	ThrottledPeriods int64
	Throttled        time.Duration
	CgroupMeasured   bool
}

// What delayed the client's goroutines, when something did (Report.Delay).
const (
	// DelayCPUBound: llmbench used nearly all its cores; its own work
	// delayed its timestamps. A bigger machine or a sharded run helps.
	DelayCPUBound = "cpu_bound"
	// DelayHost: other processes on the host took the cores llmbench
	// needed: its goroutines waited to run although it used little CPU,
	// or the machine had hardly a core left idle for it. A quieter host
	// (or CPUs set aside for llmbench) helps; more llmbench does not.
	DelayHost = "host_delayed"
	// DelayThrottled: the CPU limit of llmbench's container (its cgroup's
	// CFS quota) ran out and stopped the whole process until the next
	// period, idle cores or not. Raising or removing the limit helps (in
	// Kubernetes: no CPU limit, or a limit of whole cores well above use).
	DelayThrottled = "cpu_throttled"
)

// Thresholds of Delay: the CPU share past which llmbench is CPU-bound, the
// scheduler delay past which its timestamps are late enough to say, and the
// idle CPU below which the machine had no core ready for it.
const (
	CPUBound      = 0.9
	LateScheduler = 5 * time.Millisecond
	// MinIdleCores: a goroutine woken by a chunk runs at once when some
	// core is idle, and otherwise waits for the kernel to preempt another
	// process (2–5 ms measured on this project's 2-core machine with other
	// processes on both cores, while the Go scheduler's own delay stayed
	// at 0.5 ms: the whole process waits, so /sched/latencies cannot see
	// it). Less than half a core left idle on average means most wake-ups
	// find none.
	MinIdleCores = 0.5
	// ThrottledTolerance: a quota that stopped the process for less than
	// this over a whole run is not worth a verdict (one short period).
	ThrottledTolerance = time.Millisecond
)

// Delay says what, if anything, delayed the client's timestamps: "" when
// nothing did, DelayThrottled when its container's CPU limit stopped it,
// DelayCPUBound when llmbench itself kept its cores busy, DelayHost when
// other processes did: its goroutines waited to run while it used little
// CPU, or the others (using at least as much of the machine as llmbench)
// left it less than half a core idle. Throttling comes first: the limit,
// not the work, is what to change then.
func (r Report) Delay() string {
	switch {
	case r.Throttled >= ThrottledTolerance:
		return DelayThrottled
	case r.CPUUtilization > CPUBound:
		return DelayCPUBound
	case r.SchedLatencyP99 > LateScheduler:
		return DelayHost
	case r.hostBusy():
		return DelayHost
	}
	return ""
}

// hostBusy reports whether other processes kept the machine too busy for
// llmbench to find an idle core: less than MinIdleCores left idle, most of
// the busy part theirs.
func (r Report) hostBusy() bool {
	if !r.HostMeasured || r.HostCores == 0 {
		return false
	}
	idle := float64(r.HostCores) * (1 - r.HostOtherCPU - r.HostSelfCPU)
	return idle < MinIdleCores && r.HostOtherCPU >= r.HostSelfCPU
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
	if wall := after.wall.Sub(before.wall).Seconds(); before.hostOK && after.hostOK && after.hostCores > 0 && wall > 0 {
		machine := wall * float64(after.hostCores)
		self := after.hostSelf - before.hostSelf
		r.HostCores, r.HostMeasured = after.hostCores, true
		r.HostSelfCPU = min(1, self/machine)
		r.HostOtherCPU = min(1, max(0, (after.hostBusy-before.hostBusy)-self)/machine)
	}
	if before.cgroupOK && after.cgroupOK {
		r.CgroupMeasured, r.CPUQuota = true, after.cgroup.quota
		r.ThrottledPeriods = max(0, after.cgroup.throttledPeriods-before.cgroup.throttledPeriods)
		r.Throttled = max(0, after.cgroup.throttled-before.cgroup.throttled)
	}
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

// GarbageAllowance is the least garbage the client's heap may hold above
// what is live before the collector runs during a run (QuietGC). At 200
// requests/s the client makes about 5 MiB/s of garbage, so it collects
// about every 10 s, each time marking a live heap of a few MiB: the
// collector is out of the measurement (a cycle every few hundred
// milliseconds at GOGC=100 was not) and the resident set stays flat.
const GarbageAllowance = 64 << 20

// QuietGC keeps the garbage collector out of a measurement without letting
// the heap grow with the run (docs/decisions/0004): GOGC=off, and a memory
// limit that follows the live heap, re-set after every collection so that
// the heap holds at most max(GarbageAllowance, live heap) of garbage (the
// proportion GOGC=100 keeps for a large heap, with a floor that makes
// collections rare for a small one). The collector then runs only when
// that much garbage has piled up, and a live heap that grows (thousands of
// streams) raises the limit with it rather than making the collector run
// back to back. A user who set GOGC or GOMEMLIMIT keeps their own policy.
// It collects once first, so the run starts from a known live heap, and
// returns what that freed to the OS (debug.FreeOSMemory): the limit counts
// free heap the runtime still holds, which the allowance does not, so the
// freed heap of what ran before (a large earlier phase, or test) would have
// made the collector run before the allowance was reached (once for 48 MiB
// of garbage beside CPU hogs, after a 1.3 GiB heap). It returns a function that restores the previous policy, and whether it
// changed anything.
func QuietGC(getenv func(string) string) (restore func(), changed bool) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return func() {}, false
	}
	debug.FreeOSMemory()
	oldPercent := debug.SetGCPercent(-1)
	oldLimit := debug.SetMemoryLimit(boundedLimit())
	t := &gcTuner{}
	t.arm()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.stopped = true
		debug.SetMemoryLimit(oldLimit)
		debug.SetGCPercent(oldPercent)
	}, true
}

// gcTuner re-sets the memory limit after every collection, from a cleanup
// attached to an object that only the collector can find unreachable; it
// stops when QuietGC's restore runs (mu: a cleanup running then must not
// set the limit again after restore put the old one back). A cleanup that
// runs while the next cycle marks allocates its sentinel marked, so that
// cycle does not re-set the limit; the one after does: the limit lags the
// live heap by at most one collection, in the direction of collecting
// sooner, never of holding more.
type gcTuner struct {
	mu      sync.Mutex
	stopped bool
}

// gcSentinel holds a pointer so that it is never in a tiny-allocator block,
// whose objects' cleanups may never run.
type gcSentinel struct{ _ *gcSentinel }

func (t *gcTuner) arm() {
	runtime.AddCleanup(new(gcSentinel), func(t *gcTuner) {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.stopped {
			return
		}
		debug.SetMemoryLimit(boundedLimit())
		t.arm()
	}, t)
}

var limitMetrics = []string{
	"/gc/heap/live:bytes",                 // marked live by the last collection
	"/memory/classes/total:bytes",         // everything the runtime mapped
	"/memory/classes/heap/released:bytes", // returned to the OS
	"/memory/classes/heap/objects:bytes",  // live and dead objects
	"/memory/classes/heap/unused:bytes",   // free space inside spans
	"/memory/classes/heap/free:bytes",     // free spans not returned
}

// boundedLimit is the memory limit for a heap that holds what is live now
// plus max(GarbageAllowance, live) of garbage, on top of what the runtime
// keeps outside the heap's objects (stacks, metadata), which the limit
// counts too (the memory classes are disjoint: what is left of the total is
// stacks, the runtime's metadata and the like).
func boundedLimit() int64 {
	m := make([]metrics.Sample, len(limitMetrics))
	for i, n := range limitMetrics {
		m[i].Name = n
	}
	metrics.Read(m)
	v := func(i int) int64 {
		if m[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(m[i].Value.Uint64())
	}
	live := v(0)
	outsideObjects := v(1) - v(2) - v(3) - v(4) - v(5)
	return max(0, outsideObjects) + live + max(GarbageAllowance, live)
}
