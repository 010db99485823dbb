package sim

import (
	"bufio"
	"strings"
	"testing"
	"time"
)

// A request the client walks away from leaves vLLM's per-request metrics
// alone (OutputProcessor.abort_requests records no finished stats: no
// request_success_total of any finished_reason, no e2e observation), while
// its prompt and the tokens it generated stay in the token counters.
func TestVLLMClientAbortLeavesNoRequestStats(t *testing.T) {
	t.Parallel()
	_, ep := startEngine(t, Config{Dialect: DialectVLLM})
	client := newClient()
	resp := rawPost(t, client, ep.BaseURL+"/chat/completions", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "tell me a long story"}}, "max_tokens": 3000, "stream": true})
	// Read until a content chunk arrived (the prompt was prefilled), then leave.
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() && !strings.Contains(lines.Text(), `"content"`) {
	}
	resp.Body.Close()
	// The running gauge would not say the abort arrived: like vLLM's, it is
	// set only when the engine steps, and nothing steps once the engine is
	// empty (vLLM issues 22545, 29928). The generation counter stopping does.
	var success, prompt, generated float64
	var e2e uint64
	last := -1.0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		fams := scrape(t, ep.MetricsURL)
		success, prompt, generated = value(t, fams, "vllm:request_success_total"), value(t, fams, "vllm:prompt_tokens_total"), value(t, fams, "vllm:generation_tokens_total")
		e2e, _ = histCount(t, fams, "vllm:e2e_request_latency_seconds")
		if generated == last {
			break
		}
		last = generated
	}
	if success != 0 || e2e != 0 {
		t.Errorf("request_success_total %v, e2e count %d after a client abort: want 0 and 0, as vLLM records none", success, e2e)
	}
	if prompt == 0 || generated == 0 {
		t.Errorf("prompt_tokens_total %v, generation_tokens_total %v: the aborted request's tokens must stay counted", prompt, generated)
	}
}
