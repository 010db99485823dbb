package workload

import (
	"slices"
	"testing"
)

func TestWithPromptCounts(t *testing.T) {
	t.Parallel()
	list := []record{
		{msgs: []Message{{Role: "user", Content: "a b c"}}, tokens: 3},
		{msgs: []Message{{Role: "user", Content: "d e"}}, tokens: 2},
	}
	p := &Plan{data: newRecords(1, list, false, nil), dataDesc: "jsonl"}
	if got := p.RealPrompts(5); len(got) != 2 || got[1][0].Content != "d e" {
		t.Fatalf("RealPrompts = %v", got)
	}
	counted := p.WithPromptCounts([]int{7, 0})
	var got []int
	for i := range 4 {
		_, n, _ := counted.data.request(i)
		got = append(got, n)
	}
	if want := []int{7, 2, 7, 2}; !slices.Equal(got, want) {
		t.Errorf("prompt lengths %v, want %v (the engine's count where given, the word count elsewhere)", got, want)
	}
	if _, n, _ := p.data.request(0); n != 3 {
		t.Errorf("the original plan changed: %d", n)
	}
	if counted.dataDesc != "jsonl; prompt lengths counted by the engine's tokenizer (1 of 2 records)" {
		t.Errorf("description %q", counted.dataDesc)
	}
	if (&Plan{data: synthetic{}}).RealPrompts(3) != nil {
		t.Error("synthetic prompts are not real text")
	}
}
