package selfmon

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestHistQuantile(t *testing.T) {
	t.Parallel()
	before := &metrics.Float64Histogram{Counts: []uint64{0, 0, 0}, Buckets: []float64{0, 0.001, 0.01, 0.1}}
	tests := []struct {
		name   string
		counts []uint64
		q      float64
		want   time.Duration
	}{
		{"all in first: interpolated, not the bucket's edge", []uint64{100, 0, 0}, 0.99, 990 * time.Microsecond},
		{"inside the second", []uint64{90, 10, 0}, 0.95, 5500 * time.Microsecond},
		{"tail in last", []uint64{98, 1, 1}, 0.99, 10 * time.Millisecond},
		{"p99 exactly at 99th", []uint64{99, 0, 1}, 0.99, time.Millisecond},
		{"empty", []uint64{0, 0, 0}, 0.99, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			after := &metrics.Float64Histogram{Counts: tt.counts, Buckets: before.Buckets}
			if got := histQuantile(before, after, tt.q); got != tt.want {
				t.Errorf("histQuantile = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSinceMeasuresBusyCPU(t *testing.T) {
	before := Take()
	deadline := time.Now().Add(200 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	r := Since(before, Take())
	if r.CPUUtilization <= 0 || r.CPUUtilization > 1.5 {
		t.Fatalf("CPU utilization %v after a busy loop on one core, want in (0, 1.5]", r.CPUUtilization)
	}
	if r.Cores < 1 {
		t.Fatalf("cores = %d", r.Cores)
	}
	_ = x
}

func TestQuietGCRespectsTheUsersSetting(t *testing.T) {
	restore, changed := QuietGC(func(k string) string {
		if k == "GOGC" {
			return "200"
		}
		return ""
	})
	restore()
	if changed {
		t.Fatal("QuietGC changed the collector although GOGC was set")
	}
}

// gcCycles is the number of collections so far.
func gcCycles() uint64 {
	m := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(m)
	return m[0].Value.Uint64()
}

// heapHeld is the heap the process holds from the OS now: objects, live or
// dead, and the free space around them.
func heapHeld() uint64 {
	m := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(m)
	return m[0].Value.Uint64() + m[1].Value.Uint64() + m[2].Value.Uint64()
}

var sink []byte

// makeGarbage allocates n MiB, one MiB at a time, keeping none of it.
func makeGarbage(n int) {
	for range n {
		sink = make([]byte, 1<<20)
	}
	sink = nil
}

// Below the allowance the collector stays out; past it, it collects about
// once per allowance of garbage (not every few MiB, as GOGC=100 would on a
// small heap), and the heap stays bounded however much garbage is made.
//
// The check runs on one P (GOMAXPROCS 1). The heap peak is a race between
// this loop, which allocates, and the collector, which frees: with two Ps
// they run on two OS threads, and which of them the kernel runs on a busy
// machine decides it, not QuietGC (with two CPU hogs and other tests beside
// it the heap peaked at 311 and 941 MiB here with 4 collections for the
// 1024 MiB, and 2,073 MiB in issue 20, against ~100–150 quiet). On one P
// they share one thread, and how far the collector keeps up with the
// allocation is the runtime's pacer's decision (mark assists charge the
// allocating goroutine): what QuietGC's settings produce, whatever else the
// machine runs (65–75 MiB, 19–21 collections, at a load average of 17).
func TestQuietGCBoundsTheHeapWithFewCollections(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	restore, changed := QuietGC(func(string) string { return "" })
	defer restore()
	if !changed {
		t.Fatal("QuietGC changed nothing without GOGC or GOMEMLIMIT")
	}
	start := gcCycles()
	makeGarbage(GarbageAllowance>>20 - 16)
	if n := gcCycles() - start; n != 0 {
		t.Errorf("%d collections for %d MiB of garbage, want none below the %d MiB allowance", n, GarbageAllowance>>20-16, GarbageAllowance>>20)
	}
	const garbage = 1024 // MiB: 16 allowances
	// A miss while other processes were busy is still run again: one P
	// takes the kernel's choice of thread out, not every delay.
	missWhileBusy(t, 3*time.Minute, func() (misses []string) {
		start := gcCycles()
		var peak uint64
		for range garbage / 16 {
			makeGarbage(16)
			peak = max(peak, heapHeld())
		}
		n := gcCycles() - start
		// GOGC=100 on this few-MiB live heap would collect every 4 MiB or
		// so: hundreds of times.
		if lo, hi := uint64(garbage/(GarbageAllowance>>20)/2), uint64(2*garbage/(GarbageAllowance>>20)+2); n < lo || n > hi {
			misses = append(misses, fmt.Sprintf("%d collections for %d MiB of garbage, want %d–%d (one per %d MiB allowance)", n, garbage, lo, hi, GarbageAllowance>>20))
		}
		t.Logf("%d collections for %d MiB of garbage; heap peaked at %d MiB", n, garbage, peak>>20)
		if limit := uint64(2*GarbageAllowance + 64<<20); peak > limit {
			misses = append(misses, fmt.Sprintf("the heap reached %d MiB, want it bounded under %d MiB", peak>>20, limit>>20))
		}
		return misses
	})
}

// missWhileBusy runs attempt until it finds nothing amiss; a miss while
// other processes used more than a quarter of the machine is run again
// (until within has passed, then the check is inconclusive and the test
// skipped), one on a quiet machine, or where the host is not measured,
// fails. (internal/quiet.Retry does this for other packages; it imports
// selfmon, so selfmon's own tests cannot use it.)
func missWhileBusy(t *testing.T, within time.Duration, attempt func() []string) {
	t.Helper()
	until := time.Now().Add(within)
	for n := 1; ; n++ {
		before := Take()
		misses := attempt()
		r := Since(before, Take())
		if len(misses) == 0 {
			return
		}
		if r.HostMeasured && r.HostOtherCPU > 0.25 {
			t.Logf("attempt %d missed while other processes used %.0f%% of the machine (%s)", n, 100*r.HostOtherCPU, strings.Join(misses, "; "))
			if time.Now().Before(until) {
				continue
			}
			t.Skipf("inconclusive: other processes used more than 25%% of the machine in every attempt for %v", within)
		}
		t.Errorf("attempt %d missed, other processes using %.0f%% of the machine (measured: %v): %s", n, 100*r.HostOtherCPU, r.HostMeasured, strings.Join(misses, "; "))
		return
	}
}

// A live heap larger than the allowance raises the limit with it: the
// collector still runs about once per live heap's worth of garbage, not
// back to back (a fixed limit near the live heap would).
func TestQuietGCFollowsTheLiveHeap(t *testing.T) {
	restore, _ := QuietGC(func(string) string { return "" })
	defer restore()
	live := make([][]byte, 0, 256)
	for range 256 { // 256 MiB kept: four allowances
		live = append(live, make([]byte, 1<<20))
	}
	// A collection that finds the 256 MiB live, and the tuner's re-set
	// after it. Both were hoped for from 64 MiB of garbage, and came late
	// on a busy machine: the collector's cycle is paced by its workers and
	// the tuner is a cleanup, run by the runtime's cleanup goroutine after
	// the cycle, when the kernel runs a thread for it. Beside two CPU hogs
	// the test read the limit before either had happened, 369 and 398 MiB,
	// set after a collection that found 150–190 MiB of the 256 live (with
	// "0 collections for 1024 MiB": the cycle in progress had not ended).
	// Two runtime.GC make it certain: a tuner that runs while the first's
	// cycle marks reads the cycle before (482 MiB once, under -race), and
	// its new sentinel, allocated marked, outlives that cycle; the second
	// cycle frees it. The tuner gets a bound, which it fails if it never
	// runs.
	runtime.GC()
	runtime.GC()
	waitForLimit(t, 512<<20, 10*time.Second)
	start := gcCycles()
	const garbage = 1024
	makeGarbage(garbage)
	n := gcCycles() - start
	t.Logf("%d collections for %d MiB of garbage over 256 MiB live", n, garbage)
	if hi := uint64(2*garbage/256 + 2); n > hi {
		t.Errorf("%d collections for %d MiB of garbage over a 256 MiB live heap, want at most %d", n, garbage, hi)
	}
	// Every collection since found the 256 MiB live, so every re-set since
	// is at least 512 MiB, whether or not the last one has run yet.
	if limit := debug.SetMemoryLimit(-1); limit < 512<<20 {
		t.Errorf("memory limit %d MiB with 256 MiB live, want at least live + as much garbage (512 MiB)", limit>>20)
	}
	runtime.KeepAlive(live)
}

// waitForLimit waits, at most within, for QuietGC's tuner to set a memory
// limit of at least want after the last collection (it runs as a cleanup,
// after the collection, when the runtime gets to it), and fails the test
// if it does not: a tuner that never runs, or sets too little, fails.
func waitForLimit(t *testing.T, want int64, within time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		limit := debug.SetMemoryLimit(-1)
		if limit >= want {
			if waited := time.Since(start); waited > 10*time.Millisecond {
				t.Logf("the tuner set the limit (%d MiB) %v after the collection", limit>>20, waited.Round(time.Millisecond))
			}
			return
		}
		if time.Since(start) > within {
			t.Fatalf("memory limit %d MiB %v after a collection that found the live heap, want at least %d MiB", limit>>20, within, want>>20)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestQuietGCRestores(t *testing.T) {
	oldPercent := debug.SetGCPercent(100)
	defer debug.SetGCPercent(oldPercent)
	oldLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(oldLimit)
	restore, _ := QuietGC(func(string) string { return "" })
	makeGarbage(GarbageAllowance>>20 + 16) // a collection, so the tuner has run
	restore()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GOGC %d after restore, want 100", p)
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("memory limit %d after restore, want none", l)
	}
	makeGarbage(GarbageAllowance>>20 + 16) // the tuner must not set a limit again
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("memory limit %d after a collection past restore, want none", l)
	}
}

// The verdict tells a CPU-bound client from a host that delayed it.
func TestDelay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		r    Report
		want string
		sat  bool
	}{
		{"fine", Report{CPUUtilization: 0.3, SchedLatencyP99: time.Millisecond}, "", false},
		{"busy cores", Report{CPUUtilization: 0.95, SchedLatencyP99: 8 * time.Millisecond}, DelayCPUBound, true},
		{"the host delayed it at 4% CPU", Report{CPUUtilization: 0.04, SchedLatencyP99: 9 * time.Millisecond}, DelayHost, false},
		{"4.19 ms is under 5 ms", Report{CPUUtilization: 0.04, SchedLatencyP99: 4190 * time.Microsecond}, "", false},
		// The whole process waits when others take every core: the Go
		// scheduler's delay stays low, the machine's CPU says it.
		{"others took both cores", Report{CPUUtilization: 0.05, SchedLatencyP99: 500 * time.Microsecond,
			HostMeasured: true, HostCores: 2, HostOtherCPU: 0.9, HostSelfCPU: 0.05}, DelayHost, false},
		{"others left under half a core", Report{CPUUtilization: 0.2, SchedLatencyP99: 500 * time.Microsecond,
			HostMeasured: true, HostCores: 2, HostOtherCPU: 0.6, HostSelfCPU: 0.2}, DelayHost, false},
		{"a built-in engine beside it leaves a core idle", Report{CPUUtilization: 0.15, SchedLatencyP99: 500 * time.Microsecond,
			HostMeasured: true, HostCores: 2, HostOtherCPU: 0.3, HostSelfCPU: 0.15}, "", false},
		{"half of a big machine busy leaves many cores idle", Report{CPUUtilization: 0.1, SchedLatencyP99: 500 * time.Microsecond,
			HostMeasured: true, HostCores: 64, HostOtherCPU: 0.6, HostSelfCPU: 0.003}, "", false},
		{"llmbench itself is most of the busy part", Report{CPUUtilization: 0.85, SchedLatencyP99: 500 * time.Microsecond,
			HostMeasured: true, HostCores: 2, HostOtherCPU: 0.1, HostSelfCPU: 0.85}, "", false},
		{"not measured: only the scheduler says", Report{CPUUtilization: 0.05, SchedLatencyP99: 500 * time.Microsecond,
			HostMeasured: false, HostCores: 0, HostOtherCPU: 0}, "", false},
		{"cpu-bound wins over a busy host", Report{CPUUtilization: 0.95, SchedLatencyP99: 500 * time.Microsecond,
			HostMeasured: true, HostCores: 2, HostOtherCPU: 0.05, HostSelfCPU: 0.95}, DelayCPUBound, true},
		// A CPU limit stops the process with cores idle and no goroutine
		// queued: only the cgroup's counters say it.
		{"the container's limit stopped it", Report{CPUUtilization: 0.4, SchedLatencyP99: 500 * time.Microsecond,
			HostMeasured: true, HostCores: 2, HostOtherCPU: 0.05, HostSelfCPU: 0.4,
			CgroupMeasured: true, CPUQuota: 0.5, ThrottledPeriods: 12, Throttled: 310 * time.Millisecond}, DelayThrottled, false},
		{"throttled wins over cpu-bound", Report{CPUUtilization: 0.97, CgroupMeasured: true, CPUQuota: 1,
			ThrottledPeriods: 3, Throttled: 40 * time.Millisecond}, DelayThrottled, false},
		{"under a millisecond of throttling is not a verdict", Report{CPUUtilization: 0.3, CgroupMeasured: true, CPUQuota: 1,
			ThrottledPeriods: 1, Throttled: 200 * time.Microsecond}, "", false},
	} {
		if got := tc.r.Delay(); got != tc.want || tc.r.Saturated() != tc.sat {
			t.Errorf("%s: Delay %q, Saturated %v; want %q, %v", tc.name, got, tc.r.Saturated(), tc.want, tc.sat)
		}
	}
}

// TestHostDelayedByASpinningNeighbour spins every core of the machine in a
// child process while this process idles: the run's verdict must say the
// host delayed it, as the scheduler's own delay cannot (this process's
// goroutines are not runnable while it waits, so they never queue).
func TestHostDelayedByASpinningNeighbour(t *testing.T) {
	if os.Getenv("SELFMON_TEST_SPIN") != "" {
		var wg sync.WaitGroup
		for range runtime.NumCPU() {
			wg.Go(func() {
				for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); {
				}
			})
		}
		wg.Wait()
		return
	}
	if runtime.GOOS != "linux" {
		before := Take()
		if r := Since(before, Take()); r.HostMeasured {
			t.Fatal("a measurement of other processes where the platform has none")
		}
		t.Skip("other processes' CPU is measured on Linux only")
	}
	before := Take()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostDelayedByASpinningNeighbour$")
	cmd.Env = append(os.Environ(), "SELFMON_TEST_SPIN=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("spinning child: %v\n%s", err, out)
	}
	r := Since(before, Take())
	if !r.HostMeasured {
		t.Fatal("no measurement on Linux")
	}
	// Every core busy for about the whole interval, less the child's
	// start-up; other processes can only add to it.
	if r.HostOtherCPU < 0.7 {
		t.Errorf("a child spinning all %d cores: others' share %.2f, want >= 0.7", r.HostCores, r.HostOtherCPU)
	}
	if r.HostSelfCPU > 0.2 {
		t.Errorf("this process waited, yet its share of the machine is %.2f", r.HostSelfCPU)
	}
	if got := r.Delay(); got != DelayHost {
		t.Errorf("Delay = %q with others on %.0f%% of the machine (llmbench %.0f%%, scheduler p99 %v), want %q",
			got, 100*r.HostOtherCPU, 100*r.HostSelfCPU, r.SchedLatencyP99, DelayHost)
	}
}
