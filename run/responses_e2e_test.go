package run

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/rundir"
	"github.com/llmbench-org/llmbench/scenarios"
)

// TestResponsesScenarioAgainstGroundTruth runs the shipped responses
// example (its length cut to a count of requests) against the built-in
// engine: every request answered on /v1/responses, the client's token
// counts, finish reasons, response ids and first-content presence exactly
// the engine's truth, and its TTFT within the bound the chat path's
// ground-truth test holds (p50 500 µs, p99 2 ms of the engine's first
// flush), decided on a quiet machine (quiet.Retry).
func TestResponsesScenarioAgainstGroundTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scenario against the built-in engine")
	}
	const requests = 160
	src, err := fs.ReadFile(scenarios.Examples(), "responses.yaml")
	if err != nil {
		t.Fatal(err)
	}
	yaml := strings.Replace(string(src), "  duration: 15s\n", fmt.Sprintf("  requests: %d\n", requests), 1)
	yaml = strings.Replace(yaml, "  preset: tiny\n", "  preset: tiny\n  process: inline\n", 1)
	if yaml == string(src) || !strings.Contains(yaml, "requests: 160") || !strings.Contains(yaml, "process: inline") {
		t.Fatalf("the example changed shape; adapt the test:\n%s", src)
	}
	path := writeScenario(t, yaml)
	quiet.Need(t, 90*time.Second)
	const (
		p99Bound = 2 * time.Millisecond
		p50Bound = 500 * time.Microsecond
	)
	quiet.Retry{Within: 3 * time.Minute}.Run(t, func(int) []string {
		cio, _, stderr := testIO(nil)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		dir, err := runScenario(ctx, runOpts{scenario: path, runsDir: t.TempDir(), output: "plain", every: time.Hour}, cio)
		if err != nil {
			t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
		}
		records := readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile))
		byID := map[string]sim.RequestTruth{}
		for _, tr := range readJSONL[sim.RequestTruth](t, filepath.Join(dir, rundir.TruthFile)) {
			byID[tr.ID] = tr
		}
		if len(records) != requests {
			t.Fatalf("%d records, want %d", len(records), requests)
		}
		var dTTFT []time.Duration
		tools, reasoning := 0, 0
		for _, r := range records {
			tr, ok := byID[r.ID]
			switch {
			case !r.OK():
				t.Fatalf("request %s failed: %s %s", r.ID, r.ErrorClass, r.Error)
			case !ok:
				t.Fatalf("request %s has no ground truth", r.ID)
			case tr.Endpoint != sim.EndpointResponses || !tr.Stream || tr.Done:
				t.Fatalf("request %s: the engine served %s (stream %v, [DONE] %v)", r.ID, tr.Endpoint, tr.Stream, tr.Done)
			case r.TokenSource != client.TokensFromUsage || r.PromptTokens != tr.PromptTokens || r.OutputTokens != tr.OutputTokens ||
				r.ReasoningTokens != tr.ReasoningTokens || r.CachedTokens != tr.CachedTokens || r.FinishReason != tr.FinishReason ||
				r.ServerID != tr.ChunkID || r.PromptTokens != r.TargetPromptTokens:
				t.Fatalf("request %s: client %+v\ntruth %+v", r.ID, r, tr)
			case (r.FirstContent != 0) != (tr.FirstContentFlushed != 0) || len(r.Chunks) != tr.OutputTokens:
				t.Fatalf("request %s: first content %v, truth's %v; %d chunks for %d tokens", r.ID, r.FirstContent, tr.FirstContentFlushed, len(r.Chunks), tr.OutputTokens)
			}
			if tr.ToolCall != "" {
				tools++
			}
			if tr.ReasoningTokens > 0 {
				reasoning++
			}
			ttft, _ := r.TTFT()
			dTTFT = append(dTTFT, ttft-(tr.FirstTokenFlushed-tr.Arrival))
		}
		if tools == 0 || tools == requests || reasoning != requests {
			t.Fatalf("%d of %d answers called the tool, %d reasoned: want some and all", tools, requests, reasoning)
		}
		p50, p99 := quantileAbs(dTTFT, 0.5), quantileAbs(dTTFT, 0.99)
		t.Logf("|client TTFT - truth| p50 %v p99 %v over %d requests (%d tool calls)", p50, p99, len(dTTFT), tools)
		if p50 > p50Bound || p99 > p99Bound {
			return []string{fmt.Sprintf("TTFT vs truth: p50 %v (bound %v), p99 %v (bound %v)", p50, p50Bound, p99, p99Bound)}
		}
		return nil
	})
}
