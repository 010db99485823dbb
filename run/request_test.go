package run

import (
	"testing"

	"github.com/llmbench-org/llmbench/workload"
)

// A request that must run to max_tokens also asks for it as min_tokens where
// the engine takes both (vLLM, SGLang), and only then.
func TestClientRequestLengths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		r         workload.Request
		minTokens bool
		want      int
	}{
		{"vllm, exact length", workload.Request{MaxTokens: 64, IgnoreEOS: true}, true, 64},
		{"llama.cpp: ignore_eos alone", workload.Request{MaxTokens: 64, IgnoreEOS: true}, false, 0},
		{"lengths not enforced", workload.Request{MaxTokens: 64}, true, 0},
		{"the plan's own minimum kept", workload.Request{MaxTokens: 64, MinTokens: 8, IgnoreEOS: true}, true, 8},
	} {
		if got := clientRequest(tc.r, tc.minTokens, nil).MinTokens; got != tc.want {
			t.Errorf("%s: min_tokens %d, want %d", tc.name, got, tc.want)
		}
	}
}
