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

	"github.com/llmbench-org/llmbench/endpoints"
	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/internal/realtest"
)

// TestAnthropicNodeSDK holds the official Anthropic Node SDK
// (@anthropic-ai/sdk, pinned in testdata/node-sdk) to the engine's Messages
// API: its raw stream, its own MessageStream (which checks the events' order
// and assembles a tool call's input from the JSON deltas), a whole message,
// and an error. It skips when node or the package is missing, unless
// LLMBENCH_REQUIRE_REAL=1. Install with:
//
//	npm ci --prefix engine/sim/testdata/node-sdk
func TestAnthropicNodeSDK(t *testing.T) {
	t.Parallel()
	quiet.Busy(t)
	dir := filepath.Join("testdata", "node-sdk")
	node, err := exec.LookPath("node")
	_, pkgErr := os.Stat(filepath.Join(dir, "node_modules", "@anthropic-ai", "sdk", "package.json"))
	if err != nil || pkgErr != nil {
		realtest.Missing(t, "node or @anthropic-ai/sdk missing; install with: npm ci --prefix engine/sim/testdata/node-sdk")
	}
	e, ep := startEngine(t, Config{Dialect: DialectSGLang, Params: tinyWith(t, func(p *Params) { p.ReasoningTokens, p.ToolCallRate = 2, 1 })})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "check-anthropic.mjs", strings.TrimSuffix(ep.BaseURL, endpoints.APIRoot))
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node check-anthropic.mjs: %v\n%s", err, stderr.String())
	}
	type usage struct {
		Input  int `json:"input_tokens"`
		Output int `json:"output_tokens"`
	}
	var got struct {
		Raw struct {
			Types                     []string
			Text, Thinking, ID        string
			InputTokens, OutputTokens int
			StopReason                string
		}
		Stream struct {
			ID, StopReason, ToolName string
			Blocks                   []string
			ToolInput                struct{ Input string }
			Usage                    usage
		}
		Whole struct {
			ID, Role, Text, StopReason string
			Blocks                     []string
			Usage                      usage
		}
		Error struct {
			Thrown, IsAPIError bool
			Status             int
			Type, Message      string
		}
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("SDK output %q: %v", raw, err)
	}
	truth := map[string]RequestTruth{}
	for _, tr := range e.Truth() {
		truth[tr.ID] = tr
	}

	r, tr := got.Raw, truth["node-msg-raw"]
	if r.Types[0] != "message_start" || r.Types[len(r.Types)-1] != "message_stop" || r.ID != "node-msg-raw" ||
		len(strings.Fields(r.Thinking)) != 2 || len(strings.Fields(r.Text)) != 5 || r.StopReason != "max_tokens" || r.OutputTokens != 7 ||
		r.InputTokens != tr.PromptTokens-tr.CachedTokens || tr.Outcome != OutcomeOK || tr.OutputTokens != 7 {
		t.Errorf("raw stream as the SDK saw it: %+v (truth %+v)", r, tr)
	}
	s, tr := got.Stream, truth["node-msg-stream"]
	if s.ID != "node-msg-stream" || s.StopReason != "tool_use" || !slices.Equal(s.Blocks, []string{"thinking", "tool_use"}) ||
		s.ToolName != "get_weather" || len(strings.Fields(s.ToolInput.Input)) != 4 || s.Usage.Output != 6 || s.Usage.Input != tr.PromptTokens-tr.CachedTokens ||
		tr.ToolCall != "get_weather" || tr.Outcome != OutcomeOK {
		t.Errorf("MessageStream's final message: %+v (truth %+v)", s, tr)
	}
	w, tr := got.Whole, truth["node-msg-whole"]
	if w.ID != "node-msg-whole" || w.Role != "assistant" || !slices.Equal(w.Blocks, []string{"thinking", "text"}) || len(strings.Fields(w.Text)) != 2 ||
		w.StopReason != "max_tokens" || w.Usage.Output != 4 || w.Usage.Input != tr.PromptTokens-tr.CachedTokens || tr.Outcome != OutcomeOK {
		t.Errorf("non-streamed message as the SDK saw it: %+v (truth %+v)", w, tr)
	}
	if er := got.Error; !er.Thrown || !er.IsAPIError || er.Status != 400 || er.Type != "invalid_request_error" || er.Message == "" {
		t.Errorf("error as the SDK saw it: %+v", er)
	}
}
