package run

import (
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

// TestMessagesAgainstGroundTruth runs the Messages API end to end against
// the built-in engine, streamed and whole, with thinking, tool calls and a
// shared system prompt: every record's tokens (prompt, output, cached),
// finish reason and server id are the engine's exactly, and, streamed, its
// TTFT and time to first content are within the bound chat's are
// (timeDiffs).
func TestMessagesAgainstGroundTruth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, request string
		streamed      bool
	}{
		{"streamed", "request: {endpoint: messages, extra_body: {tools: [{name: f, input_schema: {type: object}}]}}", true},
		{"whole", "request: {endpoint: messages, stream: false, extra_body: {tools: [{name: f, input_schema: {type: object}}]}}", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			watch := quiet.WatchNeighbours()
			records, truth, _ := realRun(t, "  sim: {reasoning_tokens: 4, tool_call_rate: 0.5}", tc.request, 24)
			ttfts := timeDiffs{name: "TTFT", run: watch}
			ttfcs := timeDiffs{name: "TTFC", run: watch}
			e2e := timeDiffs{name: "E2E", run: watch}
			defer e2e.check(t)
			if tc.streamed {
				defer ttfts.check(t)
				defer ttfcs.check(t)
			}
			tools := 0
			for _, r := range records {
				tr := truth[r.ID]
				if !r.OK() || tr.Endpoint != sim.EndpointMessages || tr.Stream != tc.streamed || r.OutputTokens != tr.OutputTokens ||
					r.PromptTokens != tr.PromptTokens || r.CachedTokens != tr.CachedTokens || r.TokenSource != client.TokensFromUsage {
					t.Errorf("%s: %s %q, endpoint %s, tokens %d/%d/%d from %s (truth %d/%d/%d)", r.ID, r.ErrorClass, r.Error, tr.Endpoint,
						r.PromptTokens, r.OutputTokens, r.CachedTokens, r.TokenSource, tr.PromptTokens, tr.OutputTokens, tr.CachedTokens)
					continue
				}
				if r.FinishReason != tr.FinishReason || r.ServerID != tr.ChunkID || len(r.Violations) != 0 {
					t.Errorf("%s: finish %q (truth %q), server id %q (truth %q), violations %v", r.ID, r.FinishReason, tr.FinishReason, r.ServerID, tr.ChunkID, r.Violations)
				}
				if tr.ToolCall != "" {
					tools++
				}
				e2e.add(r.E2E(), tr.Finish-tr.Arrival)
				ttft, ok := r.TTFT()
				if !tc.streamed {
					if ok {
						t.Errorf("%s: a TTFT (%v) for an answer that came whole", r.ID, ttft)
					}
					continue
				}
				if !ok || len(r.Chunks) != len(tr.ChunkTokens) {
					t.Errorf("%s: TTFT %v, %d chunks (truth %d)", r.ID, ok, len(r.Chunks), len(tr.ChunkTokens))
					continue
				}
				ttfts.add(ttft, tr.FirstTokenFlushed-tr.Arrival)
				ttfc, ok := r.TTFC()
				switch {
				case ok != (tr.FirstContentFlushed > 0):
					t.Errorf("%s: TTFC %v, truth's first content at %v (tool call %q)", r.ID, ok, tr.FirstContentFlushed, tr.ToolCall)
				case ok:
					ttfcs.add(ttfc, tr.FirstContentFlushed-tr.Arrival)
				}
			}
			if tools == 0 || tools == len(records) {
				t.Errorf("%d of %d answers called the tool: want some of each", tools, len(records))
			}
		})
	}
}

// TestMessagesExample runs scenarios/messages.yaml, shortened, against the
// built-in engine: every answer's tokens are the engine's, some of the
// prompt came from the prefix cache (cache_read_input_tokens), and some
// answers called the tool.
func TestMessagesExample(t *testing.T) {
	t.Parallel()
	quiet.Busy(t)
	raw, err := fs.ReadFile(scenarios.Examples(), "messages.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(raw), "  duration: 15s\n", "  requests: 32\n", 1)
	y = strings.Replace(y, "  preset: tiny\n", "  preset: tiny\n  process: inline\n", 1)
	if y == string(raw) {
		t.Fatal("the example changed: shorten it some other way")
	}
	cio, _, stderr := testIO(nil)
	dir, err := runScenario(t.Context(), runOpts{scenario: writeScenario(t, y), runsDir: t.TempDir(), output: "plain", every: time.Hour}, cio)
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	records := readJSONL[client.Record](t, filepath.Join(dir, rundir.RequestsFile))
	truth := map[string]sim.RequestTruth{}
	for _, tr := range readJSONL[sim.RequestTruth](t, filepath.Join(dir, rundir.TruthFile)) {
		truth[tr.ID] = tr
	}
	cached, tools := 0, 0
	for _, r := range records {
		tr := truth[r.ID]
		if !r.OK() || r.OutputTokens != tr.OutputTokens || r.PromptTokens != tr.PromptTokens || r.CachedTokens != tr.CachedTokens || r.FinishReason != tr.FinishReason {
			t.Errorf("%s: %s %q, tokens %d/%d/%d %q (truth %d/%d/%d %q)", r.ID, r.ErrorClass, r.Error, r.PromptTokens, r.OutputTokens, r.CachedTokens,
				r.FinishReason, tr.PromptTokens, tr.OutputTokens, tr.CachedTokens, tr.FinishReason)
		}
		cached += r.CachedTokens
		if r.FinishReason == "tool_calls" {
			tools++
		}
	}
	if len(records) != 32 || cached == 0 || tools == 0 {
		t.Errorf("%d records, %d cached tokens, %d tool calls: want 32, some, some", len(records), cached, tools)
	}
}

// TestMessagesFaults: the engine's failures reach a Messages record as the
// API sends them: an error event mid-stream (after the tokens already
// received), and an error status with the API's error body, its message
// kept.
func TestMessagesFaults(t *testing.T) {
	t.Parallel()
	const request = "request: {endpoint: messages}"
	records, truth, _ := realRunErr(t, "  sim: {sse_ping: true}\n  faults: {stream_error_rate: 1, after_tokens: 3}", request, 6, true)
	for _, r := range records {
		tr := truth[r.ID]
		if r.OK() || r.ErrorClass != client.ErrStreamBroken || tr.Error == "" || !strings.Contains(r.Error, tr.Error) || len(r.Chunks) != 3 {
			t.Errorf("stream error: %s: %s %q with %d chunks; the engine sent %q after 3 tokens", r.ID, r.ErrorClass, r.Error, len(r.Chunks), tr.Error)
		}
	}
	records, truth, _ = realRunErr(t, "  faults: {error_rate: 1, error_statuses: [503]}", request, 6, true)
	for _, r := range records {
		tr := truth[r.ID]
		if r.ErrorClass != client.ErrHTTPStatus || r.Status != 503 || !strings.Contains(r.Error, tr.Error) {
			t.Errorf("error status: %s: %s %d %q; the engine answered %d %q", r.ID, r.ErrorClass, r.Status, r.Error, tr.Status, tr.Error)
		}
	}
}
