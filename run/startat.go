package run

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// StartLateness is how far past Config.StartAt a run may find itself, once
// its engine is up and its connections are open, and still start: a shard
// that starts later than that would shift its share of the schedule against
// the other shards', and the merged run would no longer be the unsharded one,
// so it stops instead and says so. One second is well above what NTP clocks
// disagree by (milliseconds) and below the length of any phase worth merging.
const StartLateness = time.Second

// checkStartAt refuses, before anything starts, a start time that has
// already passed: every shard given it would start late.
func checkStartAt(at time.Time) error {
	if late := lateness(at); late > StartLateness {
		return configError(fmt.Errorf("--start-at %s passed %s ago: give a time far enough ahead for every shard to start its engine and open its connections",
			at.UTC().Format(time.RFC3339Nano), late.Round(time.Millisecond)))
	}
	return nil
}

// startedLate is the error of a run whose engine and connections were ready
// only after its start time had passed by more than StartLateness.
func startedLate(at time.Time) error {
	if late := lateness(at); late > StartLateness {
		return fmt.Errorf("the start time %s passed %s ago, before the engine was up and the connections open: this run would start after the other shards; give a later --start-at",
			at.UTC().Format(time.RFC3339Nano), late.Round(time.Millisecond))
	}
	return nil
}

// lateness is how long ago at passed (negative: still ahead; 0 for the zero
// time, which sets no start).
func lateness(at time.Time) time.Duration {
	if at.IsZero() {
		return 0
	}
	return -time.Until(at)
}

// openingSlack is how long before the start time the first phase's opening
// snapshot is planned to end, beyond twice the time the probe took: a scrape
// may take longer the second time (the engine busy with the other shards'
// scrapes, a loaded machine).
const openingSlack = 50 * time.Millisecond

// waitForStart holds the run until the wall clock reads at (the zero time: it
// returns at once), the start barrier of sharded runs: every shard is given
// the same instant, waits for it with its engine up, its connections open and
// its scrapes under way, and begins its plan then, so that the shards'
// arrivals interleave as planned. It is the last thing before the load
// begins, so that the shards begin within a few milliseconds of each other
// (one machine: 1–3 ms apart; docs/decisions/0015).
//
// open takes the first phase's opening /metrics snapshot (the phase book
// keeps the last one taken and its start event uses it). It is taken during
// the wait rather than at the phase's start, where it would hold back every
// arrival of the shard by the scrape's duration (tens of ms, more under
// load; each shard's its own), and as late as it safely can, so the phase's
// counter window holds hardly any of the idle wait: first right away, which
// tells how long a scrape takes, then again twice that plus openingSlack
// before at, if that is still ahead, cut off at at (open's context): a host
// that slows the retake past twice the probe leaves the probe's snapshot
// standing rather than holding the arrivals back. Nothing is sent in
// between, so the phase's counter deltas still cover its requests and only
// them.
//
// A stop or a cancelled context ends the wait early; the run then goes on
// to the driver, which sees the stop and sends nothing, so the run is
// recorded and summarised as interrupted like any other. The error says
// that the snapshot ended more than StartLateness after at: the run would
// start after the other shards.
func waitForStart(ctx context.Context, at time.Time, stop <-chan struct{}, log io.Writer, open func(context.Context)) error {
	if at.IsZero() {
		return nil
	}
	if wait := time.Until(at); wait > 0 {
		fmt.Fprintf(log, "llmbench: waiting %s, until %s (--start-at), to start with the other shards\n",
			wait.Round(time.Millisecond), at.UTC().Format(time.RFC3339Nano))
	}
	began := time.Now()
	open(ctx)
	took := time.Since(began)
	if again := at.Add(-2*took - openingSlack); time.Until(again) > 0 {
		if !sleepUntil(ctx, again, stop, log) {
			return nil
		}
		// The retake ends at the start time at the latest: on a host that
		// slows it past twice the probe, the probe's snapshot stands
		// rather than the arrivals waiting for it.
		retake, cancel := context.WithDeadline(ctx, at)
		open(retake)
		cancel()
	}
	if !sleepUntil(ctx, at, stop, log) {
		return nil
	}
	if late := lateness(at); late > StartLateness {
		return fmt.Errorf("the first phase's opening /metrics snapshot ended %s after the start time %s: this run would start after the other shards; give a later --start-at, or see why the engine's /metrics answers slowly",
			late.Round(time.Millisecond), at.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// sleepUntil waits until the wall clock reads at; false if a stop or the
// context ended the wait.
func sleepUntil(ctx context.Context, at time.Time, stop <-chan struct{}, log io.Writer) bool {
	// The timer runs on the monotonic clock and at is a wall-clock time:
	// look at the wall clock again after each wake-up, so a clock stepped
	// by NTP during a long wait still starts the run at the instant the
	// other shards read on theirs.
	for wait := time.Until(at); wait > 0; wait = time.Until(at) {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-stop:
			t.Stop()
			fmt.Fprintln(log, "llmbench: interrupted while waiting for the start time")
			return false
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
	return true
}

// hostname names the machine (the pod, the container) the run ran on: merge
// tells two shards' engines at the same loopback address apart by it ("" when
// the system does not say).
func hostname() string {
	h, _ := os.Hostname()
	return h
}

// ParseStartAt reads --start-at ("" = none): an RFC 3339 time, which says
// its time zone, so that shards on machines in different zones read one
// instant.
func ParseStartAt(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--start-at %q: want an RFC 3339 time such as 2026-12-02T10:00:00Z", s)
	}
	return t, nil
}
