package run

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/internal/quiet"
	"github.com/llmbench-org/llmbench/report"
)

// TestCalibratedPromptsAreCountedExactly: against the built-in engine with a
// chat template (12 tokens a request, 4 a message), calibration finds the
// template's tokens on the engine itself (its tokenize endpoints, or probe
// requests where it has none: FastDeploy) and the fitted prompts are counted
// by the engine exactly as planned; with calibration off the engine counts
// more than planned, and the summary says by how much.
func TestCalibratedPromptsAreCountedExactly(t *testing.T) {
	t.Parallel()
	quiet.Busy(t) // eight runs at once load the machine
	for _, dialect := range []string{"llamacpp", "vllm", "sglang", "fastdeploy"} {
		for _, calibrate := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/calibrate=%v", dialect, calibrate), func(t *testing.T) {
				t.Parallel()
				dir := runQuick(t, fmt.Sprintf(`
name: calibrated
engine:
  kind: sim
  dialect: %s
  preset: tiny
  process: inline
  sim: {chat_template_tokens: 12, chat_template_message_tokens: 4}
workload:
  concurrency: 4
  requests: 24
  dataset: {type: multi_turn, turns: 2, prefix_tokens: 20}
  prompt_tokens: {dist: uniform, min: 24, max: 120}
  output_tokens: 8
request: {calibrate: %v}
scrape: {interval: 250ms}
`, dialect, calibrate))
				s, err := report.Build(dir)
				if err != nil {
					t.Fatal(err)
				}
				tok := s.Client.Tokens
				pe := tok.PromptError
				if pe == nil || pe.Requests != s.Client.Requests.OK {
					t.Fatalf("prompt error %+v over %d ok requests: want every request's error", pe, s.Client.Requests.OK)
				}
				var text strings.Builder
				if err := report.RenderText(&text, s); err != nil {
					t.Fatal(err)
				}
				if calibrate {
					if pe.Min != 0 || pe.Max != 0 || tok.Prompt != tok.PromptTarget || !strings.Contains(tok.PromptCalibration, "adds 16 tokens to a one-message request") {
						t.Errorf("calibrated: the engine counted %d prompt tokens for %d planned (error %+v); calibration: %q",
							tok.Prompt, tok.PromptTarget, pe, tok.PromptCalibration)
					}
					return
				}
				if pe.Min < 16 || tok.Prompt <= tok.PromptTarget || !strings.Contains(text.String(), "more prompt tokens than planned") {
					t.Errorf("uncalibrated: error %+v, %d counted for %d planned; the summary:\n%s", pe, tok.Prompt, tok.PromptTarget, text.String())
				}
			})
		}
	}
}

// TestFileDatasetCountedByTheEngine: a JSONL dataset's real text is not
// fitted; the engine's tokenizer counts it before the run, so the plan's
// prompt lengths are the engine's count (error 0) where a word count would
// miss the chat template's tokens.
func TestFileDatasetCountedByTheEngine(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "prompts.jsonl")
	var lines []string
	for i := range 6 {
		lines = append(lines, fmt.Sprintf(`{"prompt": "%s"}`, strings.Repeat("tell me about the sea ", i+2)))
	}
	if err := os.WriteFile(data, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := runQuick(t, `
name: counted
engine:
  kind: sim
  dialect: vllm
  preset: tiny
  process: inline
  sim: {chat_template_tokens: 9}
workload:
  concurrency: 2
  requests: 12
  dataset: {type: jsonl, path: `+data+`}
  output_tokens: 4
scrape: {interval: 250ms}
`)
	s, err := report.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok := s.Client.Tokens
	if pe := tok.PromptError; pe == nil || pe.Min != 0 || pe.Max != 0 || tok.Prompt != tok.PromptTarget ||
		!strings.Contains(tok.PromptCalibration, "the file's 6 prompts counted by") {
		t.Errorf("the engine counted %d prompt tokens, the plan %d (error %+v); calibration %q", tok.Prompt, tok.PromptTarget, tok.PromptError, tok.PromptCalibration)
	}
}
