package selfmon

import (
	"testing"
	"time"
)

// Since turns two readings into the interval's throttling.
func TestSinceCountsThrottling(t *testing.T) {
	t.Parallel()
	before := Sample{wall: time.Now(), cgroupOK: true, cgroup: cgroupCPU{throttledPeriods: 10, throttled: time.Second, quota: 1}}
	after := before
	after.wall = before.wall.Add(10 * time.Second)
	after.cgroup.throttledPeriods, after.cgroup.throttled = 14, time.Second+80*time.Millisecond
	r := Since(before, after)
	if !r.CgroupMeasured || r.ThrottledPeriods != 4 || r.Throttled != 80*time.Millisecond || r.CPUQuota != 1 || r.Delay() != DelayThrottled {
		t.Errorf("Since = %+v (delay %q)", r, r.Delay())
	}
	after.cgroupOK = false
	if r := Since(before, after); r.CgroupMeasured || r.Throttled != 0 {
		t.Errorf("one reading missing: %+v, want nothing measured", r)
	}
}
