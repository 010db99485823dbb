package workload

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// engineCount is what an engine counting as f says for msgs: the built-in
// engine's words (one token each, times TokensPerWord) plus the template.
func engineCount(msgs []Message, f Fit) int {
	return f.Overhead(msgs) + int(math.Round(float64(CountTokens(msgs))*f.perWord()))
}

// vocab returns n vocabulary words, distinct per key.
func vocab(key uint64, n int) string { return VocabularyText(key, n) }

func TestFitRequest(t *testing.T) {
	t.Parallel()
	user := func(n int) []Message { return []Message{{Role: "user", Content: vocab(1, n)}} }
	sysUser := func(s, u int) []Message {
		return []Message{{Role: "system", Content: vocab(2, s)}, {Role: "user", Content: vocab(3, u)}}
	}
	tests := []struct {
		name      string
		msgs      []Message
		target    int
		fit       Fit
		words     []int // words per message after fitting
		off       int
		noChanges bool
	}{
		{name: "zero fit changes nothing", msgs: user(40), target: 40, words: []int{40}, noChanges: true},
		{name: "one message", msgs: user(100), target: 100, fit: Fit{RequestTokens: 4, MessageTokens: 26}, words: []int{70}},
		{name: "llama.cpp capture: 9 words, +30", msgs: user(39), target: 39, fit: Fit{RequestTokens: 4, MessageTokens: 26}, words: []int{9}},
		{name: "target below the template", msgs: user(10), target: 10, fit: Fit{RequestTokens: 4, MessageTokens: 26}, words: []int{1}, off: 21},
		{name: "target equal to template + 1", msgs: user(31), target: 31, fit: Fit{RequestTokens: 4, MessageTokens: 26}, words: []int{1}},
		{name: "system + user: each gives its share", msgs: sysUser(64, 20), target: 84, fit: Fit{RequestTokens: 3, MessageTokens: 4}, words: []int{57, 16}},
		{name: "short system prompt: the rest comes from the next message", msgs: sysUser(5, 50), target: 55, fit: Fit{RequestTokens: 3, MessageTokens: 4}, words: []int{1, 43}},
		{name: "both too short", msgs: sysUser(2, 2), target: 4, fit: Fit{RequestTokens: 3, MessageTokens: 4}, words: []int{1, 1}, off: 11 + 2 - 4},
		{name: "negative overhead grows the last message", msgs: user(10), target: 10, fit: Fit{RequestTokens: -2}, words: []int{12}},
		{name: "two tokens per word", msgs: user(100), target: 100, fit: Fit{RequestTokens: 10, TokensPerWord: 2}, words: []int{45}},
		{name: "1.3 tokens per word", msgs: user(100), target: 100, fit: Fit{MessageTokens: 5, TokensPerWord: 1.3}, words: []int{73}, off: 0},
		{name: "words planned short of the target", msgs: user(10), target: 20, fit: Fit{MessageTokens: 2}, words: []int{18}},
		{name: "a system message adds less (a default system prompt replaced)", msgs: sysUser(30, 30), target: 60, fit: Fit{RequestTokens: 20, MessageTokens: 5, RoleTokens: map[string]int{"system": -15}}, words: []int{25, 25}},
		{name: "role tokens grow a message", msgs: sysUser(10, 30), target: 40, fit: Fit{RequestTokens: 2, MessageTokens: 5, RoleTokens: map[string]int{"system": -15}}, words: []int{23, 25}},
		{name: "no messages", msgs: nil, target: 0, fit: Fit{RequestTokens: 3}, words: []int{}, off: 3},
		{name: "empty message stays empty", msgs: []Message{{Role: "system", Content: ""}, {Role: "user", Content: vocab(4, 20)}}, target: 20, fit: Fit{MessageTokens: 1}, words: []int{0, 18}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			orig := cloneMessages(tt.msgs)
			in := Request{Index: 7, Messages: tt.msgs, PromptTokens: tt.target}
			out, rep := FitRequest(in, tt.fit)
			if diff := cmp.Diff(orig, tt.msgs); diff != "" {
				t.Errorf("the input's messages changed:\n%s", diff)
			}
			got := make([]int, len(out.Messages))
			for i, m := range out.Messages {
				got[i] = len(strings.Fields(m.Content))
				if !strings.HasPrefix(tt.msgs[i].Content, m.Content) && !strings.HasPrefix(m.Content, tt.msgs[i].Content) {
					t.Errorf("message %d: fitted text is not a prefix of the planned one (nor extends it)", i)
				}
				if m.Role != tt.msgs[i].Role {
					t.Errorf("message %d: role %q, want %q", i, m.Role, tt.msgs[i].Role)
				}
			}
			if diff := cmp.Diff(tt.words, got); diff != "" {
				t.Errorf("words per message (-want +got):\n%s", diff)
			}
			if out.PromptTokens != tt.target || out.Index != 7 {
				t.Errorf("PromptTokens %d index %d: the target must stay", out.PromptTokens, out.Index)
			}
			if rep.Off != tt.off || rep.Target != tt.target || rep.Expected != tt.target+tt.off {
				t.Errorf("report %+v, want off %d", rep, tt.off)
			}
			if c := engineCount(out.Messages, tt.fit); c != rep.Expected {
				t.Errorf("engine would count %d, report expects %d", c, rep.Expected)
			}
			if tt.noChanges && !cmp.Equal(out.Messages, tt.msgs) {
				t.Errorf("messages changed")
			}
		})
	}
}

func TestTakeWords(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		k    int
		want string
	}{
		{"a b c", 2, "a b"},
		{"a b c", 3, "a b c"},
		{" a  b c ", 2, " a  b"},
		{"a b", 5, "a b a b a"},
		{"a\u00a0b c", 2, "a b"}, // U+00A0 splits words for strings.Fields: rebuilt
	} {
		if got := takeWords(tt.in, strings.Fields(tt.in), tt.k); got != tt.want {
			t.Errorf("takeWords(%q, %d) = %q, want %q", tt.in, tt.k, got, tt.want)
		}
	}
}

const (
	fitShared = `
name: fit-shared
seed: 3
engine: {kind: sim}
workload:
  concurrency: 2
  requests: 64
  dataset: {type: shared_prefix, groups: 3, prompts_per_group: 4, prefix_tokens: 40}
  prompt_tokens: {dist: uniform, min: 1, max: 30}
  output_tokens: 8
`
	fitMulti = `
name: fit-multi
seed: 4
engine: {kind: sim}
workload:
  concurrency: 2
  requests: 40
  dataset: {type: multi_turn, turns: 4, prefix_tokens: 12}
  prompt_tokens: {dist: uniform, min: 2, max: 20}
  output_tokens: {dist: uniform, min: 2, max: 20}
`
	fitSynthetic = `
name: fit-synth
seed: 5
engine: {kind: sim}
workload:
  concurrency: 2
  requests: 40
  prompt_tokens: {dist: uniform, min: 1, max: 40}
  output_tokens: 4
`
	fitTrace = `
name: fit-trace
engine: {kind: sim}
workload: {trace: {format: mooncake, path: mooncake.jsonl}}
`
	fitFile = `
name: fit-file
seed: 1
engine: {kind: sim}
workload:
  concurrency: 1
  requests: 4
  dataset: {type: jsonl, path: prompts.jsonl}
`
)

// TestPlanWithFit: every fitted synthetic request is counted exactly at its
// target by an engine with that template (unless the target is below the
// template's cost, which FitOf reports), the plan stays deterministic, and
// shared prefixes and multi-turn histories stay shared.
func TestPlanWithFit(t *testing.T) {
	t.Parallel()
	fit := Fit{RequestTokens: 3, MessageTokens: 4}
	for _, tt := range []struct{ name, src string }{
		{"synthetic", fitSynthetic}, {"shared_prefix", fitShared}, {"multi_turn", fitMulti}, {"trace", fitTrace},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := plan(t, tt.src)
			p, q := base.WithFit(fit), plan(t, tt.src).WithFit(fit)
			short := 0
			for i := range 40 {
				r, planned := p.Request(i), base.Request(i)
				if diff := cmp.Diff(r, q.Request(i)); diff != "" {
					t.Fatalf("request %d differs between two fitted plans of one scenario:\n%s", i, diff)
				}
				if r.PromptTokens != planned.PromptTokens || r.ID != planned.ID || r.MaxTokens != planned.MaxTokens {
					t.Fatalf("request %d: target, id or max_tokens changed", i)
				}
				rep, ok := p.FitOf(i)
				if !ok || rep.Skipped != "" {
					t.Fatalf("FitOf(%d) = %+v, %v", i, rep, ok)
				}
				got := engineCount(r.Messages, fit)
				if got != rep.Expected {
					t.Errorf("request %d: engine counts %d, FitOf expects %d", i, got, rep.Expected)
				}
				if rep.Off < 0 {
					t.Errorf("request %d: off %d: fitting never undershoots", i, rep.Off)
				}
				if rep.Off > 0 {
					// Only a last message already down to one word leaves a request above its target.
					short++
					if last := r.Messages[len(r.Messages)-1].Content; len(strings.Fields(last)) != 1 {
						t.Errorf("request %d: off %d with %d words in the last message", i, rep.Off, len(strings.Fields(last)))
					}
					continue
				}
				if got != r.PromptTokens {
					t.Errorf("request %d: engine counts %d, target %d", i, got, r.PromptTokens)
				}
			}
			if tt.name == "synthetic" && short == 0 {
				t.Error("no request of 1..40 words fell below the template: the floor is untested")
			}
			if base.WithFit(Fit{}) != base {
				t.Error("a zero fit must return the plan itself")
			}
			if p.WithFit(fit).Request(5).Messages[0].Content != p.Request(5).Messages[0].Content {
				t.Error("fitting twice must not shorten twice")
			}
		})
	}
}

func TestFitKeepsPrefixesShared(t *testing.T) {
	t.Parallel()
	fit := Fit{RequestTokens: 3, MessageTokens: 4}
	p := plan(t, fitShared).WithFit(fit)
	system := map[int]string{}
	for i := range 24 {
		r := p.Request(i)
		g := i % 3
		if s, ok := system[g]; ok && s != r.Messages[0].Content {
			t.Errorf("request %d: group %d's system prompt differs after fitting", i, g)
		}
		system[g] = r.Messages[0].Content
		if n := len(strings.Fields(r.Messages[0].Content)); n != 40-3-4 {
			t.Errorf("request %d: system prompt %d words, want 33", i, n)
		}
	}

	// Multi-turn: turn k+1 starts with turn k's messages exactly.
	m := plan(t, fitMulti).WithFit(fit)
	for conv := range 3 {
		for turn := range 3 {
			a, b := m.Request(conv*4+turn), m.Request(conv*4+turn+1)
			if diff := cmp.Diff(a.Messages, b.Messages[:len(a.Messages)]); diff != "" {
				t.Errorf("conversation %d turn %d: the next turn's history is not this turn's prompt:\n%s", conv, turn, diff)
			}
		}
	}
}

func TestFitLeavesRealText(t *testing.T) {
	t.Parallel()
	fit := Fit{RequestTokens: 3, MessageTokens: 4}
	base := plan(t, fitFile)
	p := base.WithFit(fit)
	for i := range 4 {
		if diff := cmp.Diff(base.Request(i), p.Request(i)); diff != "" {
			t.Errorf("request %d of a file dataset changed:\n%s", i, diff)
		}
		rep, ok := p.FitOf(i)
		if !ok || rep.Skipped != SkipRealText {
			t.Errorf("FitOf(%d) = %+v", i, rep)
		}
	}
	if !strings.Contains(p.Summary().Dataset, "real text, not fitted") {
		t.Errorf("summary dataset %q does not say the text is not fitted", p.Summary().Dataset)
	}

	// FitPrompts tells real text by its words.
	reqs := []Request{
		{Index: 0, Messages: []Message{{Role: "user", Content: "Summarize the plot of Hamlet."}}, PromptTokens: 5},
		{Index: 1, Messages: []Message{{Role: "user", Content: vocab(9, 50)}}, PromptTokens: 50},
	}
	reps := FitPrompts(reqs, fit)
	if reps[0].Skipped != SkipRealText || reqs[0].Messages[0].Content != "Summarize the plot of Hamlet." {
		t.Errorf("real text fitted: %+v %q", reps[0], reqs[0].Messages[0].Content)
	}
	if reps[0].Expected != 5+7 || reps[0].Off != 7 {
		t.Errorf("real text report %+v: want expected 12 (5 words + 7)", reps[0])
	}
	if reps[1].Skipped != "" || reps[1].Off != 0 || engineCount(reqs[1].Messages, fit) != 50 {
		t.Errorf("synthetic request: %+v, engine counts %d", reps[1], engineCount(reqs[1].Messages, fit))
	}
}

func TestSyntheticAndVocabularyText(t *testing.T) {
	t.Parallel()
	a := VocabularyText(1, 64)
	if n := len(strings.Fields(a)); n != 64 || a != VocabularyText(1, 64) || a == VocabularyText(2, 64) {
		t.Errorf("VocabularyText: %d words, or not deterministic per key", n)
	}
	if !Synthetic([]Message{{Content: a}}) || Synthetic([]Message{{Content: a + " Hamlet"}}) {
		t.Error("Synthetic misjudges")
	}
	if !Synthetic(plan(t, fitShared).Request(3).Messages) {
		t.Error("a shared-prefix request is not judged synthetic")
	}
}
