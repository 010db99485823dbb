package sim

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/internal/realtest"
)

// TestOpenAINodeSDKResponses holds the official OpenAI Node SDK's
// Responses client (client.responses.create and .stream, in
// testdata/node-sdk/responses.mjs) to the engine's /v1/responses. It skips
// as TestOpenAINodeSDK does when node or the package is missing.
func TestOpenAINodeSDKResponses(t *testing.T) {
	t.Parallel()
	quiet.Busy(t)
	dir := filepath.Join("testdata", "node-sdk")
	node, err := exec.LookPath("node")
	_, pkgErr := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json"))
	if err != nil || pkgErr != nil {
		realtest.Missing(t, "node or openai@6 missing; install with: npm ci --prefix engine/sim/testdata/node-sdk")
	}
	p := tinyWith(t, func(p *Params) { p.ReasoningTokens, p.ToolCallRate = 2, 1 }) // only the request offering a tool calls it
	e, ep := startEngine(t, Config{Dialect: DialectVLLM, Params: p})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "responses.mjs", ep.BaseURL)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node responses.mjs: %v\n%s", err, stderr.String())
	}
	type usage struct {
		Input   int `json:"input_tokens"`
		Output  int `json:"output_tokens"`
		Details struct {
			Reasoning int `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	}
	var got struct {
		Stream struct {
			Types                 []string
			Seq                   []int
			Reasoning, Text, Done string
			Final                 *struct {
				ID, Status, Reason string
				Usage              usage
			}
		}
		Tool struct {
			Deltas                          int
			Joined, Name, Arguments, Status string
		}
		Whole struct {
			ID, Object, Status, OutputText string
			Usage                          usage
		}
		Error struct {
			Thrown     bool   `json:"thrown"`
			Status     int    `json:"status"`
			Message    string `json:"message"`
			IsAPIError bool   `json:"isAPIError"`
		}
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("SDK output %q: %v", raw, err)
	}
	truth := map[string]RequestTruth{}
	for _, tr := range e.Truth() {
		truth[tr.ID] = tr
	}
	s := got.Stream
	for i, n := range s.Seq {
		if n != i {
			t.Fatalf("sequence numbers %v", s.Seq)
		}
	}
	tr := truth["node-resp-1"]
	if s.Types[0] != "response.created" || !slices.Contains(s.Types, "response.reasoning_text.delta") ||
		wordCount(s.Reasoning) != 2 || wordCount(s.Text) != 5 || s.Done != s.Text || s.Final == nil ||
		s.Final.Status != "incomplete" || s.Final.Reason != "max_output_tokens" || s.Final.ID != "resp_node-resp-1" ||
		s.Final.Usage.Input != tr.PromptTokens || s.Final.Usage.Output != 7 || s.Final.Usage.Details.Reasoning != 2 {
		t.Errorf("stream as the SDK saw it: %+v (final %+v)", s, s.Final)
	}
	var args struct{ Input string }
	if tt := truth["node-resp-tool"]; tt.ToolCall != "get_weather" || got.Tool.Name != "get_weather" || got.Tool.Arguments != got.Tool.Joined ||
		got.Tool.Deltas != 10 || json.Unmarshal([]byte(got.Tool.Arguments), &args) != nil || wordCount(args.Input) != 10 || got.Tool.Status != "incomplete" {
		t.Errorf("function call as the SDK saw it: %+v (truth %+v)", got.Tool, tt)
	}
	w := got.Whole
	if w.Object != "response" || w.Status != "incomplete" || wordCount(w.OutputText) != 2 || w.Usage.Output != 4 ||
		w.ID != "resp_node-resp-whole" || truth["node-resp-whole"].Outcome != OutcomeOK {
		t.Errorf("non-streamed response as the SDK saw it: %+v", w)
	}
	if er := got.Error; !er.Thrown || !er.IsAPIError || er.Status != 400 || er.Message == "" {
		t.Errorf("error as the SDK saw it: %+v", er)
	}
}
