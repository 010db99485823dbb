package run

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/llmbench-org/llmbench/engine/launch"
	"github.com/llmbench-org/llmbench/scenarios"
	"github.com/llmbench-org/llmbench/workload"
)

// The scenario's validation and the plan refuse the same absurd values: a
// bound one of them lacks would let a value through to the other.
func TestBoundsAgree(t *testing.T) {
	t.Parallel()
	if scenarios.MaxLengthTokens != workload.MaxTokens || scenarios.MaxRate != workload.MaxRate {
		t.Errorf("scenarios refuses lengths above %d and rates above %d, workload above %d and %d",
			scenarios.MaxLengthTokens, scenarios.MaxRate, workload.MaxTokens, workload.MaxRate)
	}
}

// A run looks at the earlier runs under its runs directory for engines they
// launched and never stopped (their llmbench was killed): a group file left
// behind is dealt with (here a stale one, whose group is gone: removed).
func TestRunReapsLeftoverEngines(t *testing.T) {
	t.Parallel()
	runs := t.TempDir()
	old := filepath.Join(runs, "20260101T000000Z-killed")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	group := filepath.Join(old, launch.GroupFile)
	if err := os.WriteFile(group, []byte("2147483000\nboot_id not-this-boot\nstart 1\ncommand vllm\nowner 2147483647 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := writeScenario(t, "name: after\nengine: {kind: sim, preset: tiny, process: inline}\nworkload: {concurrency: 1, requests: 2, prompt_tokens: 8, output_tokens: 4}\n")
	if _, err := Run(t.Context(), Config{Scenario: path, RunsDir: runs}, IO{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(group); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the earlier run's group file is still there: %v", err)
	}
}
