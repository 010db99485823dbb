package selfmon

import "testing"

// BenchmarkQuietGCGarbage is TestQuietGCBoundsTheHeapWithFewCollections on
// every P the machine has, as a run uses it: how far the heap overshoots
// QuietGC's limit, and how often the collector runs, when the allocating
// goroutine and the collector's workers are on different threads (which the
// kernel may run unevenly on a busy machine: a measurement, not a test).
// Each op is 1024 MiB of garbage, 1 MiB at a time; peak-MiB is the largest
// heap held seen over all ops. -cpu 1,2 compares one P (the test's) with two.
func BenchmarkQuietGCGarbage(b *testing.B) {
	restore, _ := QuietGC(func(string) string { return "" })
	defer restore()
	const garbage = 1024 // MiB
	var peak uint64
	start := gcCycles()
	for b.Loop() {
		for range garbage / 16 {
			makeGarbage(16)
			peak = max(peak, heapHeld())
		}
	}
	b.ReportMetric(float64(gcCycles()-start)/float64(b.N), "collections/GiB")
	b.ReportMetric(float64(peak>>20), "peak-MiB")
}
