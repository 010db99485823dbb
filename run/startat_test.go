package run

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/rundir"
)

const startAtScenario = `
name: barrier
engine: {kind: sim, preset: tiny, process: inline}
workload: {concurrency: 2, requests: 6, prompt_tokens: 16, output_tokens: 8}
scrape: {interval: 200ms}
`

// The load begins at the start time, not before: its first phase starts
// then (the engine up and the connections open before it), and the run says
// it waited.
//
// The premise is real time: the engine up and the connections open before
// the start time. A host that took longer than the lead (700 ms: beside
// other work and the fault matrix's eight runs it did) leaves nothing to
// wait for, and the run rightly says nothing; then the test runs again with
// a longer lead (3 s, then 10 s; a quiet machine needs about 0.1 s), and
// says so. A run that did not wait although it was ready in time still
// fails: its load begins before the start time.
func TestRunWaitsForStartAt(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, startAtScenario)
	var (
		res    Result
		at     time.Time
		stderr *syncBuffer
	)
	for _, lead := range []time.Duration{700 * time.Millisecond, 3 * time.Second, 10 * time.Second} {
		var cio *cliIO
		cio, _, stderr = testIO(nil)
		at = time.Now().Add(lead)
		var err error
		res, err = Run(t.Context(), Config{Scenario: path, RunsDir: t.TempDir(), StartAt: at}, cio.io)
		if err != nil && strings.Contains(err.Error(), "give a later --start-at") && lead < 10*time.Second {
			t.Logf("with the start time %v ahead: %v; running again with a longer lead", lead, err)
			continue // ready more than StartLateness after it: refused, rightly
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		meta := readRunMeta(t, res.Dir)
		if strings.Contains(stderr.String(), "waiting") || meta.StartedAt.Add(meta.Phases[0].Start).Before(at) {
			break
		}
		t.Logf("with the start time %v ahead, the load began %v after it: the engine and connections were not ready in time, so there was nothing to wait for; running again with a longer lead",
			lead, meta.StartedAt.Add(meta.Phases[0].Start).Sub(at).Round(time.Millisecond))
	}
	if !strings.Contains(stderr.String(), "waiting") {
		t.Errorf("the run did not say it waited:\n%s", stderr)
	}
	meta := readRunMeta(t, res.Dir)
	began := meta.StartedAt.Add(meta.Phases[0].Start)
	if began.Before(at) {
		t.Errorf("the load began at %s, %s before the start time", began.Format(time.RFC3339Nano), at.Sub(began))
	}
	if first := firstSent(t, res.Dir); meta.StartedAt.Add(first).Before(at) {
		t.Errorf("a request was sent %s before the start time", at.Sub(meta.StartedAt.Add(first)))
	}
	if res.Summary.Client.Requests.OK != 6 {
		t.Errorf("%d requests ok, want 6", res.Summary.Client.Requests.OK)
	}
}

// A start time already past is refused before anything starts: the run
// would begin after the other shards.
func TestRunRefusesAStartAtInThePast(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, startAtScenario)
	cio, _, _ := testIO(nil)
	runs := t.TempDir()
	res, err := Run(t.Context(), Config{Scenario: path, RunsDir: runs, StartAt: time.Now().Add(-time.Minute)}, cio.io)
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "passed") {
		t.Fatalf("error %v, want a configuration error saying the start time passed", err)
	}
	if entries, _ := os.ReadDir(runs); res.Dir != "" || len(entries) > 0 {
		t.Errorf("a refused run left %q (%d entries)", res.Dir, len(entries))
	}
	// Within StartLateness it still starts: clocks a little apart, a
	// shard a few milliseconds slow to be ready.
	if err := checkStartAt(time.Now().Add(-StartLateness / 2)); err != nil {
		t.Errorf("%v, for a start time half the tolerance ago", err)
	}
}

// A stop while waiting ends the run at once and cleanly: nothing is sent,
// the run directory is summarised as interrupted.
func TestStopWhileWaitingForStartAt(t *testing.T) {
	t.Parallel()
	path := writeScenario(t, startAtScenario)
	cio, _, stderr := testIO(nil)
	// The test's deadline, not the start time, would end a wait that
	// ignored the stop: the run must return before either.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	stop := make(chan struct{})
	go func() {
		for !strings.Contains(stderr.String(), "waiting") {
			time.Sleep(10 * time.Millisecond)
		}
		close(stop)
	}()
	res, err := Run(ctx, Config{Scenario: path, RunsDir: t.TempDir(), StartAt: time.Now().Add(time.Hour), Stop: stop}, cio.io)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("error %v, want it interrupted\n%s", err, stderr)
	}
	if ctx.Err() != nil {
		t.Fatal("the run ended only at the test's deadline: the stop did not end the wait")
	}
	if n := len(readJSONL[client.Record](t, filepath.Join(res.Dir, rundir.RequestsFile))); n != 0 {
		t.Errorf("%d requests sent after a stop before the start time", n)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, rundir.SummaryFile)); err != nil {
		t.Errorf("no summary: %v", err)
	}
	if meta := readRunMeta(t, res.Dir); meta.Stopped != "interrupted" || meta.Ended.IsZero() {
		t.Errorf("run.json says stopped %q, ended %v: want an interrupted run that wrote its end", meta.Stopped, meta.Ended)
	}
}

func readRunMeta(t *testing.T, dir string) rundir.RunMeta {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rundir.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	var m rundir.RunMeta
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func firstSent(t *testing.T, dir string) time.Duration {
	t.Helper()
	recs := readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile))
	if len(recs) == 0 {
		t.Fatal("no records")
	}
	first := recs[0].Sent
	for _, r := range recs {
		first = min(first, r.Sent)
	}
	return first
}

// A run whose engine came up after the start time had passed by more than
// StartLateness stops: it would begin after the other shards.
func TestStartedLate(t *testing.T) {
	t.Parallel()
	if err := startedLate(time.Now().Add(-2 * StartLateness)); err == nil || !strings.Contains(err.Error(), "later --start-at") {
		t.Errorf("%v, want an error asking for a later start time", err)
	}
	for _, at := range []time.Time{{}, time.Now().Add(time.Minute), time.Now().Add(-StartLateness / 2)} {
		if err := startedLate(at); err != nil {
			t.Errorf("start at %v: %v", at, err)
		}
	}
}
