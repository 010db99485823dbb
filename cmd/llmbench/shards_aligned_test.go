package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/reconcile"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scrape"
)

// Two shards started together against one built-in engine, merged: the
// merged run's engine view equals the engine's own truth and the client's
// count exactly, with no foreign traffic (issue 20: "client completed 19 of
// 20" and a foreign request that did not exist, 3 times of 3). Three merges,
// each of a fresh pair of shards: the miscount came and went.
func TestAlignedShardsMergeExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three pairs of shards")
	}
	for round := range 3 {
		e, ep := startSim(t, sim.Config{Dialect: sim.DialectVLLM})
		metrics := lateReader(t, ep.MetricsURL, int64(round))
		path := writeScenario(t, `
name: aligned
seed: 3
engine: {kind: external, base_url: "`+ep.BaseURL+`", metrics_url: "`+metrics+`", dialect: vllm}
workload:
  rate: 10
  requests: 20
  prompt_tokens: {dist: uniform, min: 16, max: 64}
  output_tokens: {dist: uniform, min: 8, max: 32}
scrape: {interval: 250ms}
`)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		root := t.TempDir()
		startAt := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
		errs := make(chan error, 2)
		for i := range 2 {
			go func() {
				cio, _, stderr := testIO(nil)
				_, err := runScenario(ctx, runOpts{scenario: path, runsDir: filepath.Join(root, fmt.Sprint(i)), output: "plain", every: time.Minute,
					shard: fmt.Sprintf("%d/2", i), startAt: startAt}, cio)
				if err != nil {
					err = fmt.Errorf("shard %d: %w\n%s", i, err, stderr)
				}
				errs <- err
			}()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		merged := filepath.Join(t.TempDir(), "merged")
		cio, _, stderr := testIO(nil)
		if code := execute(ctx, cio, []string{"merge", merged, root}); code != exitOK {
			t.Fatalf("merge: exit %d\n%s", code, stderr)
		}
		cancel()
		s, err := report.Build(merged)
		if err != nil {
			t.Fatal(err)
		}
		truth := e.Truth()
		var tPrompt, tOut int
		for _, r := range truth {
			tPrompt += r.PromptTokens
			tOut += r.OutputTokens
		}
		if len(truth) != 20 || s.Client.Requests.OK != 20 {
			t.Fatalf("round %d: engine served %d, client %d ok: want 20", round, len(truth), s.Client.Requests.OK)
		}
		if s.Server == nil {
			t.Fatalf("round %d: no server view", round)
		}
		for concept, want := range map[scrape.Concept]int{scrape.RequestsFinished: 20, scrape.PromptTokens: tPrompt, scrape.GenerationTokens: tOut} {
			if got := s.Server.Counters[string(concept)]; got != float64(want) {
				t.Errorf("round %d: engine's %s Δ%g, truth %d", round, concept, got, want)
			}
		}
		countsAgree(t, round, s.Findings)
		if f := findingOf(s.Findings, reconcile.IDForeignTraffic); f == nil || f.Evidence["foreign_requests"] != 0 {
			t.Errorf("round %d: foreign traffic %+v", round, f)
		}
		if f := findingOf(s.Findings, reconcile.IDRequestConservation); f == nil || f.Evidence["difference"] != 0 || f.Evidence["client_ok"] != 20 {
			t.Errorf("round %d: request conservation %+v", round, f)
		}
	}
}

// lateReader serves the engine's /metrics at metricsURL after a pause drawn
// between 0 and 60 ms for each scrape: the shards' scrapes, which the start
// barrier aligns, then read the engine's counters in another order than they
// began, as a busy host or a slow /metrics does.
func lateReader(t *testing.T, metricsURL string, seed int64) string {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		pause := time.Duration(rng.Int64N(int64(60 * time.Millisecond)))
		mu.Unlock()
		time.Sleep(pause)
		resp, err := http.Get(metricsURL)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// Two shards against one engine that counts its prompt calibration's probe
// requests (FastDeploy's: no tokenizer endpoint, so the calibration sends a
// few real requests), the second started once the first is sending its load,
// as two shards started together without --start-at are when one of them is
// a little slower. The second's probes reach the engine after the first's
// opening snapshot: the merged run must not count them as foreign traffic,
// nor miss a request on either side (reproduced: "the engine finished 24
// requests, the client completed 20: the 4 extra are other clients'", every
// time). The engine's Δ over the merged window is the client's count over
// the same window, exactly, in each of three merges.
func TestStaggeredShardsCountNoPhantoms(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three pairs of shards")
	}
	for round := range 3 {
		_, ep := startSim(t, sim.Config{Dialect: sim.DialectFastDeploy})
		path := writeScenario(t, `
name: staggered
seed: 4
engine: {kind: external, base_url: "`+ep.BaseURL+`", metrics_url: "`+ep.MetricsURL+`", dialect: fastdeploy}
workload:
  rate: 10
  requests: 30
  prompt_tokens: {dist: uniform, min: 16, max: 64}
  output_tokens: {dist: uniform, min: 8, max: 32}
scrape: {interval: 250ms}
`)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		root := t.TempDir()
		errs := make(chan error, 2)
		start := func(i int) {
			go func() {
				cio, _, stderr := testIO(nil)
				_, err := runScenario(ctx, runOpts{scenario: path, runsDir: filepath.Join(root, fmt.Sprint(i)), output: "plain", every: time.Minute,
					shard: fmt.Sprintf("%d/2", i)}, cio)
				if err != nil {
					err = fmt.Errorf("shard %d: %w\n%s", i, err, stderr)
				}
				errs <- err
			}()
		}
		start(0)
		// The second shard starts once the first has a record: after its
		// opening snapshot, whatever the machine's speed (bounded wait).
		deadline := time.Now().Add(30 * time.Second)
		for {
			recs, _ := filepath.Glob(filepath.Join(root, "0", "*", rundir.RequestsFile))
			if len(recs) == 1 {
				if b, err := os.ReadFile(recs[0]); err == nil && len(b) > 0 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatal("the first shard sent nothing in 30 s")
			}
			time.Sleep(5 * time.Millisecond)
		}
		start(1)
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		merged := filepath.Join(t.TempDir(), "merged")
		cio, _, stderr := testIO(nil)
		if code := execute(ctx, cio, []string{"merge", merged, root}); code != exitOK {
			t.Fatalf("merge: exit %d\n%s", code, stderr)
		}
		cancel()
		s, err := report.Build(merged)
		if err != nil {
			t.Fatal(err)
		}
		if s.Client.Requests.OK != 30 {
			t.Fatalf("round %d: %d of 30 requests ok", round, s.Client.Requests.OK)
		}
		countsAgree(t, round, s.Findings)
		// Exact, but for the requests the product itself names as ending
		// while a boundary snapshot was read (edge_ambiguous): the engine
		// may have counted each on either side of it. On a quiet machine
		// there are none; beside two CPU hogs under -race a scrape took long
		// enough for one ("the engine finished 28 requests, the client
		// completed 29: within the 1 that ended as a snapshot was read").
		f := findingOf(s.Findings, reconcile.IDRequestConservation)
		if f == nil || math.Abs(f.Evidence["difference"]) > f.Evidence["edge_ambiguous"] ||
			math.Abs(f.Evidence["server_finished_delta"]-f.Evidence["client_ok"]) > f.Evidence["edge_ambiguous"] || f.Evidence["client_ok"] == 0 {
			t.Errorf("round %d: request conservation %+v", round, f)
		}
		if f := findingOf(s.Findings, reconcile.IDForeignTraffic); f == nil || f.Evidence["foreign_requests"] != 0 {
			t.Errorf("round %d: foreign traffic %+v", round, f)
		}
	}
}

// countFindings are the findings about counts, which a merge decides and no
// host's timing moves. The others (a scrape held past its timeout, time the
// client spent outside the engine) measure the machine the test runs on
// and are logged: under `go test ./...` they warned here while every count
// stayed exact.
var countFindings = map[string]bool{
	reconcile.IDRequestConservation: true, reconcile.IDForeignTraffic: true, reconcile.IDTokenConservation: true,
	reconcile.IDCounterReset: true, reconcile.IDEngineChange: true, reconcile.IDServerView: true,
}

// countsAgree fails on a count finding that is not info, and logs the rest.
func countsAgree(t *testing.T, round int, fs []reconcile.Finding) {
	t.Helper()
	for _, f := range fs {
		switch {
		case f.Severity == reconcile.Info:
		case countFindings[f.ID]:
			t.Errorf("round %d: %s %s: %s %v", round, f.Severity, f.ID, f.Verdict, f.Evidence)
		default:
			t.Logf("round %d, the host's timing: %s %s: %s", round, f.Severity, f.ID, f.Verdict)
		}
	}
}
