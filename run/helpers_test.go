package run

import (
	"context"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/internal/testkit"
	"github.com/llmbench-org/llmbench/live"
)

// cliIO is a run's outside world as the tests give it: the IO, and signals
// that runScenario turns into the two-stage stop as the command line does.
type cliIO struct {
	io      IO
	signals <-chan os.Signal
}

// runOpts are the settings the tests vary.
type runOpts struct {
	scenario, runsDir, output, shard string
	every                            time.Duration
}

// runScenario runs a scenario as `llmbench run` does, with plain progress
// lines: the first signal stops arrivals, the second aborts. It returns the
// run directory.
func runScenario(ctx context.Context, opts runOpts, cio *cliIO) (string, error) {
	ctx, abort := context.WithCancel(ctx)
	defer abort()
	stop := make(chan struct{})
	go func() {
		for n := 0; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-cio.signals:
				if n == 0 {
					close(stop)
				} else {
					abort()
				}
			}
		}
	}()
	plain := func(ctx context.Context, l Live) { live.PrintProgress(ctx, cio.io.Stderr, opts.every, 0, l.Progress) }
	res, err := Run(ctx, Config{Scenario: opts.scenario, RunsDir: opts.runsDir, Shard: opts.shard, Stop: stop, Views: []View{plain}}, cio.io)
	return res.Dir, err
}

// Shared with the command's tests (internal/testkit).
type syncBuffer = testkit.SyncBuffer

func writeScenario(t testing.TB, yaml string) string { return testkit.WriteScenario(t, yaml) }

func readJSONL[T any](t testing.TB, path string) []T { return testkit.ReadJSONL[T](t, path) }

func testIO(sigs <-chan os.Signal) (*cliIO, *syncBuffer, *syncBuffer) {
	out, errb := &syncBuffer{}, &syncBuffer{}
	return &cliIO{io: IO{Stdout: out, Stderr: errb, Getenv: func(string) string { return "" }, Self: testBinary, SelfEnv: []string{envAsCLI + "=1"}}, signals: sigs}, out, errb
}

// p99 of the absolute values.
// quantileAbs is quantile q of |x| over xs (the nearest rank: at q=0.99 of
// 200, the 2nd largest).
func quantileAbs(xs []time.Duration, q float64) time.Duration {
	abs := make([]time.Duration, len(xs))
	for i, x := range xs {
		abs[i] = max(x, -x)
	}
	slices.Sort(abs)
	return abs[int(math.Ceil(q*float64(len(abs))))-1]
}

// forwardMetrics answers r with the page at url: a /metrics proxy that a
// test can slow down or kill.
func forwardMetrics(w http.ResponseWriter, r *http.Request, url string) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, url, nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	_, _ = io.Copy(w, resp.Body)
}
