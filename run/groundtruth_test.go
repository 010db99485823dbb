package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/internal/race"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// TestRunAgainstGroundTruth is the walking skeleton's promise: a scenario runs
// end to end against the built-in engine, and what the client measured agrees
// with what the engine knows happened.
func TestRunAgainstGroundTruth(t *testing.T) {
	// 200 requests make the p99 a real quantile (the 2nd worst), not the
	// maximum: one wake-up delayed by a busy machine must not decide it.
	const requests = 200
	// Other packages' test binaries that load the machine (a browser,
	// Prometheus, real-time engine runs) wait while this test runs, and it
	// waits for them: its bound is about llmbench, not about the neighbours.
	quiet.Need(t, 90*time.Second)
	path := writeScenario(t, `
name: e2e
seed: 7
engine:
  kind: sim
  dialect: sglang
  process: inline     # the engine in-process, as the walking skeleton's acceptance asks
workload:
  concurrency: 8
  requests: 200
  prompt_tokens: {dist: uniform, min: 16, max: 64}
  output_tokens: {dist: uniform, min: 4, max: 16}
scrape:
  interval: 200ms
`)
	// The bounds are about llmbench's measurement, not about the machine. The
	// quiet lock keeps the test binaries that take it away, but `go test
	// ./...` also compiles and links the next packages beside this one, and
	// with other processes on both cores a few wake-ups come 2–5 ms late (the
	// Go scheduler's own delay does not show it: the whole process waits).
	// So each attempt measures what other processes used of the machine: an
	// attempt that misses a bound on a busy machine is run again (until
	// attemptsUntil), one that misses on a quiet machine counts, and 3 of
	// those fail. A systematic error misses on a quiet machine every time.
	// A machine busy in every attempt until attemptsUntil leaves the bounds
	// inconclusive (quiet.Retry's rule): the exact checks below still run on
	// the last attempt, then the test is skipped, saying so.
	const (
		quietMisses   = 3
		busyNeighbour = 0.25 // share of the machine other processes used
		p99Bound      = 2 * time.Millisecond
		p50Bound      = 500 * time.Microsecond // quiet: about 0.2 ms, the two hops on loopback
	)
	attemptsUntil := time.Now().Add(3 * time.Minute)
	var (
		dir                string
		stdout             *syncBuffer
		prompt, output, ok int
		missed             int
		inconclusive       string
	)
	for attempt := 1; ; attempt++ {
		began := time.Now()
		neighbours := quiet.WatchNeighbours()
		cio, out, stderr := testIO(nil)
		stdout = out
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var err error
		dir, err = runScenario(ctx, runOpts{scenario: path, runsDir: t.TempDir(), output: "plain", every: time.Second}, cio)
		if err != nil {
			t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
		}

		records := readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile))
		truths := readJSONL[sim.RequestTruth](t, filepath.Join(dir, rundir.TruthFile))
		if len(records) != requests {
			t.Fatalf("%d records, want one per planned request (%d)", len(records), requests)
		}
		byID := map[string]sim.RequestTruth{}
		for _, tr := range truths {
			byID[tr.ID] = tr
		}
		var dTTFT, dE2E []time.Duration
		prompt, output, ok = 0, 0, 0
		seen := map[int]bool{}
		for _, r := range records {
			seen[r.Index] = true
			if !r.OK() {
				t.Errorf("request %s failed: %s %s", r.ID, r.ErrorClass, r.Error)
				continue
			}
			ok++
			prompt += r.PromptTokens
			output += r.OutputTokens
			tr, found := byID[r.ID]
			if !found {
				t.Errorf("request %s has no ground truth", r.ID)
				continue
			}
			if r.TokenSource != client.TokensFromUsage {
				t.Errorf("request %s: tokens from %q, want usage", r.ID, r.TokenSource)
			}
			ttft, _ := r.TTFT()
			dTTFT = append(dTTFT, ttft-(tr.FirstTokenFlushed-tr.Arrival))
			dE2E = append(dE2E, r.E2E()-(tr.Finish-tr.Arrival))
		}
		for i := range requests {
			if !seen[i] {
				t.Errorf("planned request %d has no record", i)
			}
		}
		if len(dTTFT) == 0 {
			t.Fatal("no request joined to the ground truth")
		}
		share, measured := neighbours.Share()
		got := fmt.Sprintf("|diff| TTFT p50 %v p99 %v, E2E p50 %v p99 %v (other processes used %.0f%% of the machine)",
			quantileAbs(dTTFT, 0.5), quantileAbs(dTTFT, 0.99), quantileAbs(dE2E, 0.5), quantileAbs(dE2E, 0.99), 100*share)
		if quantileAbs(dTTFT, 0.99) <= p99Bound && quantileAbs(dE2E, 0.99) <= p99Bound &&
			quantileAbs(dTTFT, 0.5) <= p50Bound && quantileAbs(dE2E, 0.5) <= p50Bound {
			t.Logf("attempt %d: %s", attempt, got)
			break
		}
		if race.Enabled {
			t.Logf("%s: the bounds are not checked under the race detector", got)
			break
		}
		busy := measured && share > busyNeighbour
		if !busy {
			missed++
		}
		quiet.Observe(began, share, measured)
		switch {
		case missed == quietMisses:
			t.Errorf("client vs ground truth, attempt %d: %s; want p50 <= %v and p99 <= %v (missed %d times with the machine quiet)", attempt, got, p50Bound, p99Bound, missed)
		case busy && quiet.BusyStreak() >= quiet.BusyLong:
			// quiet.Retry's rule: every timed attempt of this process has
			// found the machine busy for long; running again beside the same
			// neighbours decides nothing more.
			inconclusive = fmt.Sprintf("inconclusive: client vs ground truth, attempt %d: %s; want p50 <= %v and p99 <= %v: every timed attempt of this test binary has found other processes using more than %.0f%% of the machine for %v, where a miss could be theirs",
				attempt, got, p50Bound, p99Bound, 100*busyNeighbour, quiet.BusyStreak().Round(time.Second))
		case time.Now().After(attemptsUntil):
			inconclusive = fmt.Sprintf("inconclusive: client vs ground truth, attempt %d: %s; want p50 <= %v and p99 <= %v: the time for attempts ran out with %d misses on a quiet machine (%d fail) and the others while other processes used more than %.0f%% of it, where a miss could be theirs",
				attempt, got, p50Bound, p99Bound, missed, quietMisses, 100*busyNeighbour)
		default:
			t.Logf("attempt %d: %s: above the bounds, running again", attempt, got)
			continue
		}
		break
	}

	var sum report.Summary
	b, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Server == nil {
		t.Fatal("summary has no server view")
	}
	for _, c := range []struct {
		name string
		want int
	}{{"prompt_tokens", prompt}, {"generation_tokens", output}, {"requests_finished", ok}} {
		if got := sum.Server.Counters[c.name]; got != float64(c.want) {
			t.Errorf("server Δ%s = %v, client sum = %d: they must be equal", c.name, got, c.want)
		}
	}
	// The dataset writes prompts for the built-in engine's tokenizer: the
	// engine must count exactly what the plan aimed for.
	if sum.Client.Tokens.PromptTarget != prompt || sum.Client.Tokens.OutputTarget != output {
		t.Errorf("planned prompt %d / output %d tokens, the engine counted %d / %d", sum.Client.Tokens.PromptTarget, sum.Client.Tokens.OutputTarget, prompt, output)
	}
	if sum.Client.Requests.OK != ok || sum.Client.Tokens.Output != output {
		t.Errorf("summary client view %+v disagrees with requests.jsonl (ok %d, output %d)", sum.Client.Requests, ok, output)
	}
	for _, name := range []string{"ttft", "e2e"} {
		d, has := sum.Server.Latency[name]
		if !has || d.N != float64(ok) {
			t.Errorf("server %s histogram: %+v, want %d observations", name, d, ok)
		}
		// The client's samples, re-binned into the engine's buckets, must
		// describe the same distribution: the engine's clock and the
		// client's differ by well under a bucket.
		// The gap is real time as the bounds above are: under the race
		// detector beside two CPU hogs, with TTFT 10 ms (p50) and 216 ms
		// (p99) off the engine's, it reached 0.100. Where those bounds were
		// not decided, neither is it (said so); the CDF must be there.
		switch {
		case len(d.CDF) == 0:
			t.Errorf("%s: no client vs server CDF at the server's bounds", name)
		case d.CDFMaxGap > 0.1 && (race.Enabled || inconclusive != ""):
			t.Logf("%s: client vs server CDF at the server's bounds: gap %.3f over %d points, above 0.1, where the real-time bounds were not decided", name, d.CDFMaxGap, len(d.CDF))
		case d.CDFMaxGap > 0.1:
			t.Errorf("%s: client vs server CDF at the server's bounds: gap %.3f over %d points, want <= 0.1", name, d.CDFMaxGap, len(d.CDF))
		}
	}
	for _, want := range []string{"TTFT", "ITL", "TPOT", "E2E", "requests: 200 ok"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("terminal summary lacks %q:\n%s", want, stdout.String())
		}
	}
	for _, f := range []string{rundir.ScenarioFile, rundir.ScrapesFile, rundir.RunFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("run directory lacks %s: %v", f, err)
		}
	}
	if inconclusive != "" {
		t.Skip(inconclusive)
	}
}
