package workload

import (
	"fmt"
	"strings"

	"github.com/llmbench-org/llmbench/scenarios"
)

// batchInputs makes the plan's requests those of a pooling endpoint
// (embeddings, rerank; decision 1400) when the scenario's is one: each
// request carries request.inputs texts (rerank: the query, then that many
// documents), text j of request i being request i·texts + j of the
// dataset, its messages joined by newlines, so that texts are drawn as
// prompts are and differ across requests. Nothing is generated: no
// max_tokens, no ignore_eos.
func (p *Plan) batchInputs(s scenarios.Scenario) {
	texts, rerank := s.Request.Pooling()
	if texts == 0 {
		return
	}
	p.data = batched{inner: p.data, texts: texts, rerank: rerank}
	p.ignoreEOS = false
	what := fmt.Sprintf("%d inputs", texts)
	if rerank {
		what = fmt.Sprintf("a query and %d documents", texts-1)
	}
	p.dataDesc += "; " + what + " a request, nothing generated (no max_tokens sent)"
}

// batched is a dataset whose requests each carry texts of inner's.
type batched struct {
	inner  dataset
	texts  int
	rerank bool
}

// request is request i's texts, one message each, and the prompt tokens
// the engine should count: every text's words, and for rerank the query's
// again with each document (a cross-encoder reads each pair whole).
func (b batched) request(i int) ([]Message, int, int) {
	msgs := make([]Message, b.texts)
	tokens := make([]int, b.texts)
	for j := range b.texts {
		m, _, _ := b.inner.request(i*b.texts + j)
		msgs[j] = Message{Role: "user", Content: joinContents(m)}
		tokens[j] = countWords(msgs[j].Content)
	}
	target := 0
	for j, n := range tokens {
		if b.rerank && j > 0 {
			n += tokens[0]
		} else if b.rerank {
			continue
		}
		target += n
	}
	return msgs, target, 0
}

// joinContents is the messages' contents joined by newlines, as a
// completions prompt is.
func joinContents(msgs []Message) string {
	if len(msgs) == 1 {
		return msgs[0].Content
	}
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n")
}
