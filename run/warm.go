package run

import (
	"context"
	"fmt"
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
func warmUp(ctx context.Context, cfg Config, sc scenarios.Scenario, plan *workload.Plan, up *engineUp, start time.Time) (*client.Client, error) {
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
	if err := warm(ctx, cl, conc, cfg.Stop); err != nil {
		cl.Close()
		return nil, fmt.Errorf("open connections to %s: %w", up.ep.BaseURL, err)
	}
	if err := startedLate(cfg.StartAt); err != nil {
		cl.Close()
		return nil, err
	}
	return cl, nil
}

// warmTimeout bounds opening the connections before the run.
const warmTimeout = time.Minute

// warm opens n connections, within warmTimeout, unless stop closes first.
func warm(ctx context.Context, cl *client.Client, n int, stop <-chan struct{}) error {
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
	err := cl.Warm(ctx, n)
	select {
	case <-stopped:
		return fmt.Errorf("%w while opening connections", ErrInterrupted)
	default:
	}
	if err != nil && context.Cause(ctx) != nil && ctx.Err() != nil {
		return fmt.Errorf("%w: %w", context.Cause(ctx), err)
	}
	return err
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
