package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/llmbench-org/llmbench/endpoints"
)

// The pooling endpoints (embeddings, rerank; decision 1400): a request
// carries a batch of texts and is answered whole, with vectors or scores
// and no generated token. A Request's messages are its texts, one message
// each: embeddings' inputs, or rerank's query (the first) and documents
// (the rest). The answer goes through readWhole's reading and limits, then
// takePooled: only counts are kept (how many inputs were answered, the
// usage), never a vector or a score.

// whole reports whether the answer comes whole rather than streamed: a
// stream:false request, or any pooling one.
func (c *Client) whole() bool { return c.cfg.NoStream || c.endpoint.Pooling() }

// poolingBody is a pooling request's JSON body (the extras appended after
// it) and how many inputs it carries: embeddings' {model, input: [texts],
// encoding_format: "float"} (the format left to the extra body when it sets
// one), rerank's {model, query, documents: [texts]} with the documents
// under the endpoint's Reserved member (TEI's "texts").
func (c *Client) poolingBody(r Request) ([]byte, int, error) {
	texts := make([]string, len(r.Messages))
	for i, m := range r.Messages {
		texts[i] = m.Content
	}
	model, _ := json.Marshal(c.cfg.Model)
	b := append(append([]byte(`{"model":`), model...), ',')
	inputs := texts
	if c.endpoint.Kind == endpoints.KindRerank {
		if len(texts) < 2 {
			return nil, 0, fmt.Errorf("a rerank request needs a query and at least one document, got %d texts", len(texts))
		}
		q, _ := json.Marshal(texts[0])
		b = append(append(append(b, `"query":`...), q...), ',')
		inputs = texts[1:]
	}
	if len(inputs) == 0 {
		return nil, 0, errors.New("an embeddings request needs at least one input")
	}
	list, err := json.Marshal(inputs)
	if err != nil {
		return nil, 0, err
	}
	key, _ := json.Marshal(c.endpoint.Reserved)
	b = append(append(append(b, key...), ':'), list...)
	if c.endpoint.Kind == endpoints.KindEmbeddings && !c.extraSets("encoding_format") {
		b = append(b, `,"encoding_format":"float"`...)
	}
	return append(b, '}'), len(inputs), nil
}

// extraSets reports whether Config.ExtraBody sets key.
func (c *Client) extraSets(key string) bool {
	for _, m := range c.extraBody {
		if m.key == key {
			return true
		}
	}
	return false
}

// poolingExtras are the members a pooling request adds to its body: the
// dialect's id field and every extra body member (top_n, dimensions,
// truncate_prompt_tokens…). Nothing of generation (max_tokens, min_tokens,
// ignore_eos, stream_options) is sent: an engine may refuse it.
func (c *Client) poolingExtras(r Request) []byte {
	b := make([]byte, 0, 48+c.extraLen)
	sendsID := c.idField != "" && r.ID != ""
	if sendsID {
		id, _ := json.Marshal(r.ID) // a string always marshals
		b = append(append(b, `,"`+c.idField+`":`...), id...)
	}
	for _, m := range c.extraBody {
		if m.key == c.idField && sendsID {
			continue
		}
		b = append(b, m.member...)
	}
	return b
}

// poolingAnswer is what a pooling answer says, as far as llmbench reads it:
// the items (embeddings' data, rerank's results, or TEI's bare array of
// ranks), each only by its index, and the usage's counts, raw so that a
// count that is not an integer is a flagged violation rather than a
// malformed answer.
type poolingAnswer struct {
	ID      json.RawMessage `json:"id"`
	Data    []poolingItem   `json:"data"`
	Results []poolingItem   `json:"results"`
	Usage   *struct {
		PromptTokens json.RawMessage `json:"prompt_tokens"`
		TotalTokens  json.RawMessage `json:"total_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type poolingItem struct {
	Index *int `json:"index"`
}

// decodePooling reads a pooling answer: an object (embeddings, vLLM's,
// Jina's, Cohere's rerank) or a bare array of ranks (TEI's rerank).
func decodePooling(body []byte) (poolingAnswer, error) {
	var a poolingAnswer
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		err := json.Unmarshal(body, &a.Results)
		return a, err
	}
	err := json.Unmarshal(body, &a)
	return a, err
}

// items is the answer's items for the endpoint's kind.
func (a *poolingAnswer) items(kind endpoints.Kind) []poolingItem {
	if kind == endpoints.KindEmbeddings {
		return a.Data
	}
	return a.Results
}

// checkItems says what is wrong with n items answering inputs inputs ("" when
// nothing is): embeddings owe one vector per input, rerank at most one result
// per document (top_n may ask for fewer) and at least one; every index
// within the inputs, none twice.
func checkItems(kind endpoints.Kind, items []poolingItem, inputs int) string {
	n := len(items)
	switch {
	case kind == endpoints.KindEmbeddings && n != inputs:
		return fmt.Sprintf("%d vectors for %d inputs", n, inputs)
	case kind == endpoints.KindRerank && (n == 0 || n > inputs):
		return fmt.Sprintf("%d results for %d documents", n, inputs)
	}
	seen := make([]bool, inputs)
	for i, it := range items {
		switch {
		case it.Index == nil:
			return fmt.Sprintf("item %d has no index", i)
		case *it.Index < 0 || *it.Index >= inputs:
			return fmt.Sprintf("item %d has index %d, outside the %d inputs", i, *it.Index, inputs)
		case seen[*it.Index]:
			return fmt.Sprintf("index %d answered twice", *it.Index)
		}
		seen[*it.Index] = true
	}
	return ""
}

// takePooled reads a pooling answer into the record: its id, how many
// items came (Results), and the usage's prompt tokens (total_tokens when
// prompt_tokens is absent: vLLM's older rerank and Jina's), judged as a
// streamed usage is. An answer that is not what the endpoint returns, or
// that misses inputs, fails as malformed_chunk; an error object, as the
// server's error.
func (cl *call) takePooled(body []byte, cancel context.CancelCauseFunc) {
	rec := cl.rec
	kind := cl.c.endpoint.Kind
	a, err := decodePooling(body)
	switch {
	case err != nil:
		rec.ErrorClass = ErrMalformedChunk
		rec.Error = fmt.Sprintf("%s response: %v: %.200q", kind, err, body)
		return
	case len(a.Error) > 0 && string(a.Error) != "null":
		cl.errorEvent(body, cancel)
		return
	}
	if nonEmptyString(a.ID) {
		rec.ServerID = unquote(a.ID)
	}
	items := a.items(kind)
	rec.Results = len(items)
	if why := checkItems(kind, items, rec.Inputs); why != "" {
		rec.ErrorClass = ErrMalformedChunk
		rec.Error = fmt.Sprintf("%s response: %s", kind, why)
		return
	}
	if a.Usage == nil {
		return // TEI's rerank, Cohere's: the engine's count is not known
	}
	raw := a.Usage.PromptTokens
	if len(raw) == 0 || string(raw) == "null" {
		raw = a.Usage.TotalTokens
	}
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	n, err := strconv.ParseInt(string(raw), 10, 0)
	u := wireUsage{PromptTokens: int(n)}
	cl.checkUsage(&u, err != nil, &cl.usage, false)
	cl.usage, cl.hasUsage = u, true
}

// recordEndpoint is Record.Endpoint: the endpoint's name, empty for the
// default, so that a chat run's records stay as they were.
func (c *Client) recordEndpoint() string {
	if c.endpoint.Name == endpoints.Default {
		return ""
	}
	return c.endpoint.Name
}

// appendPooling writes a record's endpoint and pooling counts into its
// line (recordjson.go), each only when set.
func appendPooling(b []byte, r *Record) []byte {
	if r.Endpoint != "" {
		b = appendString(append(b, `,"endpoint":`...), r.Endpoint)
	}
	b = appendInt(b, `,"inputs":`, r.Inputs)
	return appendInt(b, `,"results":`, r.Results)
}

// EngineRequests is how many requests the engine's own counters count for
// this one: one per input for a pooling request (vLLM and SGLang split a
// batch of inputs, and a rerank's documents, into one engine request each),
// one otherwise. Reconciliation and the closing snapshot's settling count
// requests in these units (decision 1402).
func (r *Record) EngineRequests() int { return max(r.Inputs, 1) }
