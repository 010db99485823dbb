package scenarios

import (
	"strings"
	"testing"
)

// TestPoolingScenarios: what a pooling endpoint's scenario may and may not
// say, and what its requests carry.
func TestPoolingScenarios(t *testing.T) {
	t.Parallel()
	base := "name: x\nengine: {kind: sim}\nworkload: {concurrency: 1, requests: 1%s}\nrequest: {%s}\n"
	for _, c := range []struct {
		workload, request, extra, want string
		texts                          int
		rerank                         bool
	}{
		{"", "endpoint: embeddings", "", "", 1, false},
		{"", "endpoint: embeddings, inputs: 8", "", "", 8, false},
		{"", "endpoint: rerank, inputs: 4", "", "", 5, true},
		{"", "endpoint: tei-rerank", "", "", 2, true},
		{", dataset: {type: shared_prefix, groups: 2, prompts_per_group: 2, prefix_tokens: 8}", "endpoint: embeddings", "", "", 1, false},
		{"", "endpoint: chat", "", "", 0, false},
		{"", "inputs: 2", "", "request.inputs: only a pooling endpoint", 0, false},
		{"", "endpoint: embeddings, inputs: -1", "", "want 1 or more", 0, false},
		{"", "endpoint: embeddings, stream: true", "", "never streamed", 0, false},
		{"", "endpoint: embeddings, stream: false", "", "", 1, false},
		{", dataset: {type: multi_turn, turns: 2}", "endpoint: embeddings", "", "workload.dataset.type", 0, false},
		{"", "endpoint: rerank, extra_body: {query: q}", "", "sets query itself", 0, false},
		{"", "endpoint: embeddings, extra_body: {input: [a]}", "", "request.extra_body.input", 0, false},
		{"", "endpoint: embeddings", "slo: {ttft: 1s}\n", "TTFT and TPOT do not apply", 0, false},
		{"", "endpoint: embeddings", "slo: {e2e: 1s}\n", "", 1, false},
	} {
		yaml := strings.Replace(base, "%s", c.workload, 1)
		yaml = strings.Replace(yaml, "%s", c.request, 1) + c.extra
		s, err := Parse("f.yaml", []byte(yaml))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s: %v", c.workload, c.request, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %s: %v, want an error with %q", c.workload, c.request, err, c.want)
		case c.want == "":
			if texts, rerank := s.Request.Pooling(); texts != c.texts || rerank != c.rerank {
				t.Errorf("%s: Pooling() = %d, %v; want %d, %v", c.request, texts, rerank, c.texts, c.rerank)
			}
		}
	}
}
