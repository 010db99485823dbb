package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/workload"
)

// warmUp is the warm stage: the client for the engine, with the plan's
// connections opened before the measured phase, so the first requests do not
// pay connection set-up inside their TTFT. A stop, or an engine that does not
// answer within warmTimeout, ends the wait; so does a start time (--start-at)
// that passed meanwhile. The client returned is the caller's to close.
func warmUp(ctx context.Context, cfg Config, sc scenarios.Scenario, plan *workload.Plan, up *engineUp, start time.Time, meta *runMeta, log io.Writer) (*client.Client, error) {
	conc := expectedConcurrency(plan)
	rq := sc.Request
	cl, err := client.New(client.Config{
		BaseURL: up.ep.BaseURL, APIKey: up.apiKey, Model: up.ep.Model, Dialect: up.ep.Dialect,
		Start: start, MaxConns: conc, IncludeUsage: true, Timeout: sc.Workload.Timeout,
		Endpoint: rq.Endpoint, NoStream: !rq.Streamed(), ExtraBody: rq.ExtraBody, Headers: rq.Headers,
		SessionHeader: sessionHeader(sc),
	})
	if err != nil {
		return nil, configError(err)
	}
	note, err := warm(ctx, cl, conc, cfg.Stop)
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("open connections to %s: %w", up.ep.BaseURL, err)
	}
	if note != "" {
		fmt.Fprintf(log, "llmbench: %s\n", note)
		meta.addEngineNote(note)
	}
	if err := startedLate(cfg.StartAt); err != nil {
		cl.Close()
		return nil, err
	}
	return cl, nil
}

// warmTimeout bounds opening the connections before the run.
const warmTimeout = time.Minute

// warmRetryFor bounds how long connections that an engine broke as they
// opened are opened again.
const warmRetryFor = 10 * time.Second

// warm opens n connections, within warmTimeout, unless stop closes first.
// Connections the engine broke as they opened (a reset or an EOF: it
// restarted meanwhile, or drops connections) are opened again, pausing
// 100 ms to 1 s between tries, for up to warmRetryFor. Once the engine has
// answered some, the run goes on with those: its requests meet the engine
// as it is and their records say so, and note (for the run's notes) says
// how many were left unopened and why. An engine that answered none fails
// the run, at once when nothing listens (every dial refused).
func warm(ctx context.Context, cl *client.Client, n int, stop <-chan struct{}) (note string, err error) {
	ctx, cancel := context.WithTimeoutCause(ctx, warmTimeout, fmt.Errorf("no answer within %s", warmTimeout))
	defer cancel()
	stopped := make(chan struct{})
	go func() {
		select {
		case <-stop:
			close(stopped)
			cancel()
		case <-ctx.Done():
		}
	}()
	retryUntil := time.Now().Add(warmRetryFor)
	answered := false
	for pause := 100 * time.Millisecond; ; pause = min(2*pause, time.Second) {
		err := cl.Warm(ctx, n)
		select {
		case <-stopped:
			return "", fmt.Errorf("%w while opening connections", ErrInterrupted)
		default:
		}
		if err == nil {
			return "", nil
		}
		if context.Cause(ctx) != nil && ctx.Err() != nil {
			return "", fmt.Errorf("%w: %w", context.Cause(ctx), err)
		}
		we, ok := errors.AsType[*client.WarmError](err)
		if !ok {
			return "", err
		}
		answered = answered || we.Opened > 0
		switch {
		case !we.Accepted && !answered:
			return "", err // nothing listens
		case time.Now().Add(pause).After(retryUntil) && answered:
			return fmt.Sprintf("opened %d of %d connections before the run, retrying for %v (the engine broke the others as they opened: %v): the run goes on, its requests meeting the engine as it is",
				we.Opened, n, warmRetryFor, we.First), nil
		case time.Now().Add(pause).After(retryUntil):
			return "", err
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
		}
	}
}

// expectedConcurrency is how many connections the plan will keep busy at most:
// closed-loop users, or for an open loop about a second's worth of arrivals
// (the transport opens more on demand; this only decides what is opened early).
func expectedConcurrency(plan *workload.Plan) int {
	n := searchConcurrency(plan)
	for _, ph := range plan.Phases() {
		if ph.Open() {
			n = max(n, min(int(math.Ceil(ph.Rate)), 1024))
		} else {
			n = max(n, ph.Concurrency)
		}
	}
	return n
}
