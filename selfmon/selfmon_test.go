package selfmon

import (
	"runtime/metrics"
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

func TestQuietGCCollectsOnlyAtTheLimit(t *testing.T) {
	restore, changed := QuietGC(func(string) string { return "" })
	if !changed {
		t.Fatal("QuietGC changed nothing without GOGC or GOMEMLIMIT")
	}
	before := Take()
	var keep [][]byte
	for i := 0; i < 64; i++ { // 64 MB of garbage: a few collections at GOGC=100 with a small heap
		keep = append(keep[:0], make([]byte, 1<<20))
	}
	r := Since(before, Take())
	restore()
	if r.GCCycles != 0 {
		t.Errorf("%d collections while quiet, want none below the %d-byte limit", r.GCCycles, DefaultMemoryLimit)
	}
	_ = keep
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
	} {
		if got := tc.r.Delay(); got != tc.want || tc.r.Saturated() != tc.sat {
			t.Errorf("%s: Delay %q, Saturated %v; want %q, %v", tc.name, got, tc.r.Saturated(), tc.want, tc.sat)
		}
	}
}
