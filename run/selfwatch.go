package run

import (
	"context"
	"time"

	"github.com/llmbench-org/llmbench/live"
	"github.com/llmbench-org/llmbench/selfmon"
)

// clientLookEvery is how often the run looks at its own process while the
// load runs: a second is long enough for the scheduler's histogram and the
// CPU counters to say something, short enough that the live view warns
// within two of a problem (two looks must agree: Recorder.SetClient).
const clientLookEvery = time.Second

// watchClient tells the live view, every clientLookEvery until ctx ends,
// what the client measured of itself over the last interval: whether its
// container's CPU limit stopped it, it was CPU-bound, or other processes
// took its cores. The run's summary says the same over the whole run.
func watchClient(ctx context.Context, win interface{ SetClient(live.ClientLive) }) {
	prev := selfmon.Take()
	t := time.NewTicker(clientLookEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := selfmon.Take()
		win.SetClient(clientLive(selfmon.Since(prev, now)))
		prev = now
	}
}

// clientLive is one look in the live view's terms.
func clientLive(r selfmon.Report) live.ClientLive {
	return live.ClientLive{
		Delay: r.Delay(), CPUUtilization: r.CPUUtilization, Cores: r.Cores,
		HostOtherCPU: r.HostOtherCPU, HostMeasured: r.HostMeasured,
		ThrottledPeriods: r.ThrottledPeriods, Throttled: r.Throttled, CPUQuota: r.CPUQuota,
	}
}

// silentLookEvery is how often the live view learns how many requests in
// flight have received no byte: often enough for its 1 s resolution.
const silentLookEvery = 250 * time.Millisecond

// watchSilent tells the live view, a few times a second until ctx ends,
// how many requests in flight have received no byte and for how long (what
// a drain waits on: every progress line says it).
func watchSilent(ctx context.Context, cl interface {
	Silent() (int, time.Duration)
}, win interface{ SetSilent(int, time.Duration) }) {
	t := time.NewTicker(silentLookEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			win.SetSilent(0, 0)
			return
		case <-t.C:
			win.SetSilent(cl.Silent())
		}
	}
}
