package scrape

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Poller takes one snapshot of whatever a window covers: one target, or a
// fleet summed (see PollTargets).
type Poller func(ctx context.Context) (Snapshot, error)

// Settler waits, before the closing snapshot of a window, until the engine
// has counted every request the client finished: engines count a request a
// little before or after its last byte reaches the client.
type Settler struct {
	Poll    Poller
	Timeout time.Duration // how long to keep polling; 0 = DefaultSettleTimeout
	Every   time.Duration // pause between polls; 0 = DefaultSettleEvery
}

// Defaults of a Settler.
const (
	DefaultSettleTimeout = 10 * time.Second
	DefaultSettleEvery   = 100 * time.Millisecond
)

// giveUpAfterFailures is how many polls in a row may fail before Wait stops:
// refused connections fail fast, so this is about a second of a dead target;
// timeouts take a scrape timeout each, so a slow one keeps its whole wait.
const giveUpAfterFailures = 10

// Settled is how waiting for the engine's count ended.
type Settled struct {
	Snapshot Snapshot      `json:"-"`        // the last successful poll: the closing snapshot
	Finished float64       `json:"finished"` // Δrequests_finished since the baseline at that poll
	Want     float64       `json:"want"`     // the client's count
	OK       bool          `json:"ok"`       // Finished reached Want
	Over     bool          `json:"over"`     // Finished passed Want: someone else's requests are in the window
	Polls    int           `json:"polls"`    // successful and failed
	Waited   time.Duration `json:"waited_ns"`
	Reason   string        `json:"reason,omitempty"` // why it did not settle
}

// Wait polls until Δrequests_finished since base reaches want, the timeout
// passes, or ctx ends. It stops at once when the dialect has no finished
// counter (llama.cpp), saying so, and keeps polling through failed scrapes
// unless ten in a row fail (the target is gone).
// The result always says whether it settled and, if not, why.
func (s Settler) Wait(ctx context.Context, base Snapshot, want float64) Settled {
	timeout, every := s.Timeout, s.Every
	if timeout <= 0 {
		timeout = DefaultSettleTimeout
	}
	if every <= 0 {
		every = DefaultSettleEvery
	}
	began := time.Now()
	deadline := began.Add(timeout)
	out := Settled{Want: want}
	var lastErr error
	failedInARow := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			out.Waited = time.Since(began)
			out.Reason = fmt.Sprintf("stopped after %d polls: %v", out.Polls, ctx.Err())
			return out
		case <-timer.C:
		}
		snap, err := s.Poll(ctx)
		out.Polls++
		out.Waited = time.Since(began)
		if err == nil {
			lastErr = nil
			out.Snapshot = snap
			d := Delta(base, snap)
			got, has := d.Counters[RequestsFinished]
			if !has {
				out.Reason = "the engine has no finished-request counter"
				return out
			}
			out.Finished = got
			if slices.Contains(d.Resets, RequestsFinished) {
				// The engine restarted since the baseline: its count starts
				// again from zero and can never reach the client's. This
				// poll is the closing snapshot; the report stitches the
				// count across the restart from the scrapes between.
				out.Reason = "the engine restarted in the window (its finished-request counter went down): the count is stitched from the scrapes, not settled"
				return out
			}
			if got >= want {
				out.OK, out.Over = true, got > want
				return out
			}
		} else {
			lastErr = err
			failedInARow++
			// A target that refuses every poll is gone (the engine died):
			// waiting out the timeout would not change what it counted.
			if failedInARow >= giveUpAfterFailures {
				out.Reason = fmt.Sprintf("not settled: the last %d polls failed (%v)", failedInARow, err)
				return out
			}
		}
		if err == nil {
			failedInARow = 0
		}
		if !time.Now().Add(every).Before(deadline) {
			switch {
			case lastErr != nil:
				out.Reason = fmt.Sprintf("not settled after %v: last scrape failed: %v", timeout, lastErr)
			default:
				out.Reason = fmt.Sprintf("not settled after %v: the engine counted %g of %g finished requests", timeout, out.Finished, want)
			}
			return out
		}
		timer.Reset(every)
	}
}

// PollTargets is a Poller that scrapes every target once, hands each row to
// keep (so the run stores it like any other scrape; nil to drop), and sums
// them. A poll fails when any target fails: the sum of a partial fleet cannot
// be compared with a baseline of the whole one.
func PollTargets(targets []Target, start time.Time, keep func(Row)) Poller {
	return PollSource(Targets(targets), start, keep)
}
