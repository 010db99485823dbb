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

// waitForStart holds the run until the wall clock reads at (the zero time: it
// returns at once), the start barrier of sharded runs: every shard is given
// the same instant, waits for it with its engine up, its connections open and
// its scrapes under way, and begins its plan then, so that the shards'
// arrivals interleave as planned. It is the last thing before the load
// begins, so that the shards begin within a few milliseconds of each other
// (one machine: 1–3 ms apart; docs/decisions/0015).
//
// A stop or a cancelled context ends the wait early; the run then goes on
// to the driver, which sees the stop and sends nothing, so the run is
// recorded and summarised as interrupted like any other.
func waitForStart(ctx context.Context, at time.Time, stop <-chan struct{}, log io.Writer) {
	wait := time.Until(at)
	if at.IsZero() || wait <= 0 {
		return
	}
	fmt.Fprintf(log, "llmbench: waiting %s, until %s (--start-at), to start with the other shards\n",
		wait.Round(time.Millisecond), at.UTC().Format(time.RFC3339Nano))
	// The timer runs on the monotonic clock and at is a wall-clock time:
	// look at the wall clock again after each wake-up, so a clock stepped
	// by NTP during a long wait still starts the run at the instant the
	// other shards read on theirs.
	for wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-stop:
			t.Stop()
			fmt.Fprintln(log, "llmbench: interrupted while waiting for the start time")
			return
		case <-ctx.Done():
			t.Stop()
			return
		}
		wait = time.Until(at)
	}
}

// hostname names the machine (the pod, the container) the run ran on: merge
// tells two shards' engines at the same loopback address apart by it ("" when
// the system does not say).
func hostname() string {
	h, _ := os.Hostname()
	return h
}
