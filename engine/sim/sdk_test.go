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

// TestOpenAINodeSDK holds the official OpenAI Node SDK (openai@6, in
// testdata/node-sdk) to the engine. It skips when node or the package is
// missing, unless LLMBENCH_REQUIRE_REAL=1. Install with:
//
//	npm ci --prefix engine/sim/testdata/node-sdk
func TestOpenAINodeSDK(t *testing.T) {
	t.Parallel()
	quiet.Busy(t) // loads the machine: a timing-sensitive test elsewhere waits for it
	dir := filepath.Join("testdata", "node-sdk")
	node, err := exec.LookPath("node")
	_, pkgErr := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json"))
	if err != nil || pkgErr != nil {
		realtest.Missing(t, "node or openai@6 missing; install with: npm ci --prefix engine/sim/testdata/node-sdk")
	}
	e, ep := startEngine(t, Config{})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "check.mjs", ep.BaseURL)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node check.mjs: %v\n%s", err, stderr.String())
	}
	var got struct {
		Stream struct {
			IDs                   []string `json:"ids"`
			Roles                 []string `json:"roles"`
			Contents              []string `json:"contents"`
			Finish                []string `json:"finish"`
			EmptyChoicesWithUsage bool     `json:"emptyChoicesWithUsage"`
			Usage                 *struct {
				Prompt     int `json:"prompt_tokens"`
				Completion int `json:"completion_tokens"`
				Total      int `json:"total_tokens"`
			} `json:"usage"`
		} `json:"stream"`
		Whole struct {
			ID, Role, Content, Finish string
			Usage                     struct {
				Completion int `json:"completion_tokens"`
			} `json:"usage"`
		} `json:"whole"`
		Error struct {
			Thrown     bool   `json:"thrown"`
			Status     int    `json:"status"`
			Message    string `json:"message"`
			IsAPIError bool   `json:"isAPIError"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("SDK output %q: %v", raw, err)
	}
	s := got.Stream
	if !slices.Equal(s.Roles, []string{"assistant"}) || len(s.Contents) != 7 || !slices.Equal(s.Finish, []string{"length"}) {
		t.Errorf("stream as the SDK saw it: roles %v, %d content deltas, finish %v", s.Roles, len(s.Contents), s.Finish)
	}
	if !s.EmptyChoicesWithUsage || s.Usage == nil || s.Usage.Prompt != 5 || s.Usage.Completion != 7 || s.Usage.Total != 12 {
		t.Errorf("usage chunk: %+v (empty choices %v)", s.Usage, s.EmptyChoicesWithUsage)
	}
	for _, id := range s.IDs {
		if id != "node-stream-1" {
			t.Errorf("chunk id %q, want the rid", id)
		}
	}
	if w := got.Whole; w.ID != "node-whole-1" || w.Role != "assistant" || len(strings.Fields(w.Content)) != 4 || w.Finish != "length" || w.Usage.Completion != 4 {
		t.Errorf("non-streaming response as the SDK saw it: %+v", w)
	}
	if er := got.Error; !er.Thrown || !er.IsAPIError || er.Status != 400 || er.Message == "" {
		t.Errorf("error as the SDK saw it: %+v", er)
	}
	ids := map[string]bool{}
	for _, tr := range e.Truth() {
		ids[tr.ID] = tr.Outcome == OutcomeOK
	}
	if !ids["node-stream-1"] || !ids["node-whole-1"] {
		t.Errorf("truth outcomes: %v", ids)
	}
}
