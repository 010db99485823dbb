package workload

import (
	"reflect"
	"testing"

	"github.com/llmbench-org/llmbench/scenarios"
)

// TestBatchedInputs: a pooling plan's request carries request.inputs texts
// (rerank: the query first), each a dataset prompt of its own, no
// max_tokens and no ignore_eos, and aims for the engine's count (rerank:
// the query again with each document); a chat plan is as it was.
func TestBatchedInputs(t *testing.T) {
	t.Parallel()
	plan := func(request string) *Plan {
		s, err := scenarios.Parse("p.yaml", []byte("name: p\nseed: 3\nengine: {kind: sim}\nworkload: {concurrency: 1, requests: 4, prompt_tokens: {dist: uniform, min: 4, max: 12}}\nrequest: {"+request+"}\n"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		request string
		texts   int
		rerank  bool
	}{{"endpoint: embeddings, inputs: 5", 5, false}, {"endpoint: rerank, inputs: 3", 4, true}, {"endpoint: tei-rerank", 2, true}} {
		p, chat := plan(c.request), plan("endpoint: chat")
		seen := map[string]bool{}
		for i := range 4 {
			r := p.Request(i)
			if len(r.Messages) != c.texts || r.MaxTokens != 0 || r.IgnoreEOS {
				t.Fatalf("%s: request %d: %d texts, max_tokens %d, ignore_eos %v", c.request, i, len(r.Messages), r.MaxTokens, r.IgnoreEOS)
			}
			want := 0
			for j, m := range r.Messages {
				n := CountTokens([]Message{m})
				if n < 4 || n > 12 || seen[m.Content] {
					t.Errorf("%s: request %d text %d: %d words, seen before %v", c.request, i, j, n, seen[m.Content])
				}
				seen[m.Content] = true
				switch {
				case !c.rerank:
					want += n
				case j > 0:
					want += n + CountTokens(r.Messages[:1])
				}
			}
			if r.PromptTokens != want {
				t.Errorf("%s: request %d aims for %d prompt tokens, want %d", c.request, i, r.PromptTokens, want)
			}
			if again := p.Request(i); !reflect.DeepEqual(again.Messages[0], r.Messages[0]) {
				t.Errorf("%s: request %d is not the same twice", c.request, i)
			}
			if cr := chat.Request(i); len(cr.Messages) != 1 || cr.MaxTokens == 0 || !cr.IgnoreEOS {
				t.Errorf("chat request %d changed: %+v", i, cr)
			}
		}
	}
}
