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
// so it stops instead and says so. One second is well above what an NTP
// clock disagrees by (milliseconds) and below the length of any phase worth
// merging.
const StartLateness = time.Second

// checkStartAt refuses, before anything starts, a start time that has
// already passed: every shard given it would start late.
func checkStartAt(at time.Time) error {
	if at.IsZero() {
		return nil
	}
	if late := -time.Until(at); late > StartLateness {
		return configError(fmt.Errorf("--start-at %s passed %s ago: give a time far enough ahead for every shard to start its engine and open its connections",
			at.UTC().Format(time.RFC3339Nano), late.Round(time.Millisecond)))
	}
	return nil
}

// waitForStart holds the run until the wall clock reads at (the zero time: it
// returns at once), the start barrier of sharded runs: every shard is given
// the same instant, waits for it with its engine up and its connections open,
// and sends its first request then, so that the shards' arrivals interleave as
// planned. A stop or a cancelled context ends the wait with ErrInterrupted;
// a start time that passed more than StartLateness ago is an error.
func waitForStart(ctx context.Context, at time.Time, stop <-chan struct{}, log io.Writer) error {
	if at.IsZero() {
		return nil
	}
	wait := time.Until(at)
	if wait < -StartLateness {
		return fmt.Errorf("the start time %s passed %s ago, before the engine was up and the connections open: this run would start after the other shards; give a later --start-at",
			at.UTC().Format(time.RFC3339Nano), (-wait).Round(time.Millisecond))
	}
	if wait > 0 {
		fmt.Fprintf(log, "llmbench: waiting %s, until %s (--start-at), to start with the other shards\n",
			wait.Round(time.Millisecond), at.UTC().Format(time.RFC3339Nano))
	}
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
			return fmt.Errorf("%w while waiting for the start time", ErrInterrupted)
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w while waiting for the start time", ErrInterrupted)
		}
		wait = time.Until(at)
	}
	return nil
}

// hostname names the machine (the pod, the container) the run ran on: merge
// tells two shards' engines at the same loopback address apart by it ("" when
// the system does not say).
func hostname() string {
	h, _ := os.Hostname()
	return h
}
