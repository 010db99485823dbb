package rundir

import "testing"

// A merged run is as trustworthy as its worst shard: throttling outranks
// every other verdict, and the most-throttled shard's figures are kept.
func TestMergeKeepsTheWorstThrottling(t *testing.T) {
	t.Parallel()
	q1, q2 := 1.0, 2.0
	var dst ClientHealth
	for _, h := range []ClientHealth{
		{Delay: "cpu_bound", CPUUtilization: 0.95},
		{Delay: "cpu_throttled", CPUQuota: &q1, ThrottledPeriods: 3, Throttled_s: 0.05},
		{Delay: "host_delayed", CPUQuota: &q2, ThrottledPeriods: 1, Throttled_s: 0.01},
	} {
		mergeClientHealth(&dst, h)
	}
	if dst.Delay != "cpu_throttled" || dst.ThrottledPeriods != 3 || dst.Throttled_s != 0.05 || dst.CPUQuota == nil || *dst.CPUQuota != 1 {
		t.Errorf("merged %+v (quota %v)", dst, dst.CPUQuota)
	}
}
