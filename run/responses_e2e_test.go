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
	const requests = 96
	src, err := fs.ReadFile(scenarios.Examples(), "responses.yaml")
	if err != nil {
		t.Fatal(err)
	}
	yaml := strings.Replace(string(src), "  duration: 15s\n", fmt.Sprintf("  requests: %d\n", requests), 1)
	yaml = strings.Replace(yaml, "  preset: tiny\n", "  preset: tiny\n  process: inline\n", 1)
	if yaml == string(src) || !strings.Contains(yaml, "requests: 96") || !strings.Contains(yaml, "process: inline") {
		t.Fatalf("the example changed shape; adapt the test:\n%s", src)
	}
	path := writeScenario(t, yaml)
	quiet.Need(t, 90*time.Second)
	const (
		p99Bound = 2 * time.Millisecond
		p50Bound = 500 * time.Microsecond
	)
	// At most 90 s of attempts: the run package's tests share go test's
	// 10 minutes, beside CPU hogs too (.ci/busy-test).
	quiet.Retry{Within: 90 * time.Second, QuietMisses: 2}.Run(t, func(int) []string {
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

// TestResponsesUnderFaults: Responses streams framed as gateways frame
// them (mixed line ends, data over several lines, extra fields, gzip) are
// read exactly; streams the engine breaks (an error event mid-way, no
// terminal event, a reset, a malformed event) fail as such, each where
// the truth says it was broken, and the rest are exact.
func TestResponsesUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs scenarios against the built-in engine")
	}
	for _, c := range []struct {
		name, faults string
		broken       map[string]client.ErrorClass // a fault in the truth → the record's class
	}{
		{"framing", "wire: {line_ending: mixed, multiline_data: true, extra_fields: true, content_encoding: gzip}", nil},
		{"broken streams", "stream_error_rate: 0.2, missing_done_rate: 0.2, reset_rate: 0.2, malformed_rate: 0.2, after_tokens: 3",
			map[string]client.ErrorClass{sim.FaultStreamError: client.ErrStreamBroken, sim.FaultMissingDone: client.ErrStreamBroken,
				sim.FaultReset: client.ErrStreamBroken, sim.FaultMalformed: client.ErrMalformedChunk}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := runQuick(t, fmt.Sprintf(`
name: responses-faults
engine:
  kind: sim
  dialect: vllm
  preset: tiny
  process: inline
  sim: {reasoning_tokens: 3}
  faults: {%s}
workload: {concurrency: 4, requests: 40, prompt_tokens: 16, output_tokens: 12}
request: {endpoint: responses}
scrape: {interval: 300ms}
`, c.faults))
			byID := map[string]sim.RequestTruth{}
			for _, tr := range readJSONL[sim.RequestTruth](t, filepath.Join(dir, rundir.TruthFile)) {
				byID[tr.ID] = tr
			}
			broken := 0
			for _, r := range readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile)) {
				tr := byID[r.ID]
				var want client.ErrorClass
				for _, f := range tr.Faults {
					if cl, ok := c.broken[f]; ok && want == "" {
						want = cl
					}
				}
				switch {
				case want != "":
					broken++
					if r.ErrorClass != want {
						t.Errorf("%s: faults %v, record %s %q, want %s", r.ID, tr.Faults, r.ErrorClass, r.Error, want)
					}
				case !r.OK():
					t.Errorf("%s: %s %q (faults %v)", r.ID, r.ErrorClass, r.Error, tr.Faults)
				case r.OutputTokens != tr.OutputTokens || r.ReasoningTokens != tr.ReasoningTokens || r.PromptTokens != tr.PromptTokens ||
					r.FinishReason != tr.FinishReason || len(r.Chunks) != len(tr.ChunkTokens):
					t.Errorf("%s: client %+v\ntruth %+v", r.ID, r, tr)
				}
			}
			if c.broken != nil && broken == 0 {
				t.Error("no stream was broken: the faults did not strike")
			}
		})
	}
}
