package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/client"
)

// TestLengthTally: a request that stopped at a length limit that is not
// its max_tokens (finish_reason length) reached the engine's context and is
// counted apart; one that stopped otherwise ("stop": ignore_eos not
// honoured) is short; one that got its max_tokens is neither.
func TestLengthTally(t *testing.T) {
	rec := func(prompt, output, maxTokens int, finish string) *client.Record {
		return &client.Record{PromptTokens: prompt, OutputTokens: output, MaxTokens: maxTokens, FinishReason: finish}
	}
	var l lengthTally
	for _, r := range []*client.Record{
		rec(400, 112, 160, "length"), // 512: the context
		rec(300, 200, 200, "length"), // max_tokens reached
		rec(450, 62, 160, "length"),  // 512 again
		rec(100, 40, 160, "stop"),    // ignore_eos not honoured
		rec(100, 10, 0, "stop"),      // no max_tokens: not counted
	} {
		l.add(r)
	}
	var got TokenCounts
	l.into(&got)
	wantShort := &OutputShort{Requests: 1, Of: 4, TokensShort: 120, PlannedTokens: 680, MissingFraction: 120.0 / 680, MeanFraction: 40.0 / 160}
	if diff := cmp.Diff(wantShort, got.OutputShort); diff != "" {
		t.Errorf("output short (-want +got):\n%s", diff)
	}
	wantTrunc := &ContextTruncated{Requests: 2, Of: 4, TokensShort: 48 + 98, ContextMin: 512, ContextMax: 512}
	if diff := cmp.Diff(wantTrunc, got.ContextTruncated); diff != "" {
		t.Errorf("context truncated (-want +got):\n%s", diff)
	}
	if n := contextNote(got); !strings.Contains(n, "2 of 4 requests stopped at the engine's context") || !strings.Contains(n, "= 512 tokens") {
		t.Errorf("note %q", n)
	}
	var none TokenCounts
	(&lengthTally{}).into(&none)
	if none.OutputShort != nil || none.ContextTruncated != nil || contextNote(none) != "" {
		t.Errorf("an empty tally set %+v", none)
	}
}
