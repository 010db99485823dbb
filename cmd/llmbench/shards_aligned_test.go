package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/report/reconcile"
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
		for _, f := range s.Findings {
			if f.Severity != reconcile.Info || f.ID == reconcile.IDForeignTraffic && f.Evidence["foreign_requests"] != 0 {
				t.Errorf("round %d: %s %s: %s %v", round, f.Severity, f.ID, f.Verdict, f.Evidence)
			}
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
