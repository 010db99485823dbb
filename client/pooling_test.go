package client

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/endpoints"
)

// pooledServer answers every request with answer and keeps what it was
// sent: the path, the body, the Accept header.
func pooledServer(t *testing.T, status int, answer string) (base string, got func() (path string, body map[string]any, accept string)) {
	t.Helper()
	var path, accept string
	var body map[string]any
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		path, accept = r.URL.Path, r.Header.Get("Accept")
		body = nil
		_ = json.Unmarshal(b, &body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	return srv.URL, func() (string, map[string]any, string) { return path, body, accept }
}

func texts(ss ...string) []Message {
	out := make([]Message, len(ss))
	for i, s := range ss {
		out[i] = Message{Role: "user", Content: s}
	}
	return out
}

// TestPoolingRequests: each pooling endpoint's body, path and answer, read
// into the record; generation's members never sent; TTFT does not apply.
func TestPoolingRequests(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, endpoint, answer, path string
		msgs                         []Message
		extra                        map[string]any
		wantBody                     map[string]any
		inputs, results, prompt      int
		source                       TokenSource
	}{
		{
			name: "embeddings", endpoint: endpoints.Embeddings, path: "/v1/embeddings",
			msgs:     texts("a b", "c d e", "f"),
			answer:   `{"id":"embd-1","object":"list","data":[{"index":1,"object":"embedding","embedding":[0.1,0.2]},{"index":0,"embedding":[0,1]},{"index":2,"embedding":[1,0]}],"usage":{"prompt_tokens":6,"total_tokens":6}}`,
			wantBody: map[string]any{"model": "test-model", "input": []any{"a b", "c d e", "f"}, "encoding_format": "float", "rid": "r1"},
			inputs:   3, results: 3, prompt: 6, source: TokensFromUsage,
		},
		{
			name: "embeddings, the format from the extra body", endpoint: endpoints.Embeddings, path: "/v1/embeddings",
			msgs:     texts("a"),
			extra:    map[string]any{"encoding_format": "base64", "dimensions": 8},
			answer:   `{"data":[{"index":0,"embedding":"AAAA"}],"usage":{"prompt_tokens":1}}`,
			wantBody: map[string]any{"model": "test-model", "input": []any{"a"}, "encoding_format": "base64", "dimensions": float64(8), "rid": "r1"},
			inputs:   1, results: 1, prompt: 1, source: TokensFromUsage,
		},
		{
			name: "rerank, vLLM's answer", endpoint: endpoints.Rerank, path: "/v1/rerank",
			msgs:     texts("q w", "d1", "d2 x", "d3"),
			extra:    map[string]any{"top_n": 2},
			answer:   `{"id":"rerank-1","model":"m","usage":{"prompt_tokens":12,"total_tokens":12},"results":[{"index":2,"document":{"text":"d3"},"relevance_score":0.9},{"index":0,"document":{"text":"d1"},"relevance_score":0.1}]}`,
			wantBody: map[string]any{"model": "test-model", "query": "q w", "documents": []any{"d1", "d2 x", "d3"}, "top_n": float64(2), "rid": "r1"},
			inputs:   3, results: 2, prompt: 12, source: TokensFromUsage,
		},
		{
			name: "rerank, total_tokens only (Jina, older vLLM)", endpoint: endpoints.Rerank, path: "/v1/rerank",
			msgs:   texts("q", "d1"),
			answer: `{"results":[{"index":0,"relevance_score":0.5}],"usage":{"total_tokens":4}}`,
			inputs: 1, results: 1, prompt: 4, source: TokensFromUsage,
		},
		{
			name: "TEI's rerank at the server's root", endpoint: endpoints.TEIRerank, path: "/rerank",
			msgs:     texts("q", "d1", "d2"),
			answer:   `[{"index":1,"score":0.99},{"index":0,"score":0.01}]`,
			wantBody: map[string]any{"model": "test-model", "query": "q", "texts": []any{"d1", "d2"}, "rid": "r1"},
			inputs:   2, results: 2,
		},
	} {
		base, got := pooledServer(t, http.StatusOK, c.answer)
		cl := newTestClient(t, base, func(cfg *Config) { cfg.Endpoint, cfg.ExtraBody = c.endpoint, c.extra })
		rec := cl.Do(t.Context(), Request{ID: "r1", Messages: c.msgs, MaxTokens: 16, IgnoreEOS: true, MinTokens: 16})
		path, body, accept := got()
		if !rec.OK() {
			t.Fatalf("%s: %s %s", c.name, rec.ErrorClass, rec.Error)
		}
		if path != c.path || accept != "application/json" {
			t.Errorf("%s: posted to %s accepting %q", c.name, path, accept)
		}
		for _, k := range []string{"stream", "stream_options", "max_tokens", "min_tokens", "ignore_eos"} {
			if _, ok := body[k]; ok {
				t.Errorf("%s: body sets %s: %v", c.name, k, body)
			}
		}
		for k, v := range c.wantBody {
			if b, _ := json.Marshal(body[k]); string(b) != mustJSON(v) {
				t.Errorf("%s: body %s = %s, want %s", c.name, k, b, mustJSON(v))
			}
		}
		if rec.Endpoint != c.endpoint || rec.Inputs != c.inputs || rec.Results != c.results || rec.PromptTokens != c.prompt || rec.TokenSource != c.source {
			t.Errorf("%s: record endpoint %q inputs %d results %d prompt %d (%q)", c.name, rec.Endpoint, rec.Inputs, rec.Results, rec.PromptTokens, rec.TokenSource)
		}
		if _, ok := rec.TTFT(); ok || rec.FirstToken != 0 || rec.Chunks != nil || rec.OutputTokens != 0 || rec.NoStream || !rec.Pooling() || rec.E2E() <= 0 {
			t.Errorf("%s: a pooling record with a timeline or output: %+v", c.name, rec)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestPoolingAnswersRefused: answers that miss inputs, repeat or invent an
// index, are not the endpoint's shape, or carry an error, fail; a usage
// that is not an integer is flagged and not used.
func TestPoolingAnswersRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, endpoint, answer string
		status                 int
		class                  ErrorClass
		want                   string
	}{
		{"a vector short", endpoints.Embeddings, `{"data":[{"index":0,"embedding":[1]}]}`, 200, ErrMalformedChunk, "1 vectors for 2 inputs"},
		{"an index twice", endpoints.Embeddings, `{"data":[{"index":0},{"index":0}]}`, 200, ErrMalformedChunk, "index 0 answered twice"},
		{"an index outside", endpoints.Embeddings, `{"data":[{"index":0},{"index":2}]}`, 200, ErrMalformedChunk, "index 2, outside"},
		{"no index", endpoints.Embeddings, `{"data":[{"index":0},{"embedding":[1]}]}`, 200, ErrMalformedChunk, "no index"},
		{"a chat answer", endpoints.Embeddings, `{"choices":[{"message":{"content":"x"},"finish_reason":"stop"}]}`, 200, ErrMalformedChunk, "0 vectors"},
		{"no results", endpoints.Rerank, `{"results":[]}`, 200, ErrMalformedChunk, "0 results for 2 documents"},
		{"more results than documents", endpoints.Rerank, `{"results":[{"index":0},{"index":1},{"index":1}]}`, 200, ErrMalformedChunk, "3 results for 2 documents"},
		{"not JSON", endpoints.TEIRerank, `[{"index":0,`, 200, ErrMalformedChunk, "rerank response"},
		{"an error object", endpoints.Embeddings, `{"error":{"message":"model is not an embedding model"}}`, 200, ErrStreamBroken, "not an embedding model"},
		{"an error status (TEI)", endpoints.TEIRerank, `{"error":"Input validation error","error_type":"Validation"}`, 422, ErrHTTPStatus, "Input validation error"},
	} {
		base, _ := pooledServer(t, c.status, c.answer)
		cl := newTestClient(t, base, func(cfg *Config) { cfg.Endpoint = c.endpoint })
		msgs := texts("a", "b")
		if c.endpoint != endpoints.Embeddings {
			msgs = texts("q", "a", "b")
		}
		rec := cl.Do(t.Context(), Request{ID: "r", Messages: msgs})
		if rec.ErrorClass != c.class || !strings.Contains(rec.Error, c.want) {
			t.Errorf("%s: %s %q, want %s with %q", c.name, rec.ErrorClass, rec.Error, c.class, c.want)
		}
	}
	for _, usage := range []string{`1.5`, `"7"`, `-3`, `1e2`, `99999999999999999999`} {
		base, _ := pooledServer(t, 200, `{"data":[{"index":0}],"usage":{"prompt_tokens":`+usage+`}}`)
		cl := newTestClient(t, base, func(cfg *Config) { cfg.Endpoint = endpoints.Embeddings })
		rec := cl.Do(t.Context(), Request{ID: "r", Messages: texts("a")})
		if !rec.OK() || rec.PromptTokens != 0 || rec.TokenSource != "" || len(rec.Violations) != 1 {
			t.Errorf("usage %s: %+v, want a success whose usage is flagged and not used", usage, rec)
		}
	}
}

// FuzzPoolingAnswer: any answer body either fails the record with a class
// or succeeds with its counts within what was sent; nothing panics.
func FuzzPoolingAnswer(f *testing.F) {
	for _, s := range []string{
		`{"data":[{"index":0,"embedding":[0.1]},{"index":1,"embedding":"AAAA"}],"usage":{"prompt_tokens":3,"total_tokens":3}}`,
		`{"results":[{"index":1,"relevance_score":0.2,"document":{"text":"x"}}],"usage":{"total_tokens":9}}`,
		`[{"index":0,"score":1},{"index":1,"score":0,"text":"t"}]`,
		`{"error":{"message":"m"}}`, `{"error":null,"data":[]}`, `[]`, `null`, `{"usage":{"prompt_tokens":-1}}`,
		`{"data":[{"index":1e0},{"index":null}]}`, ` [ ] `, `{"data":{},"results":"x"}`,
	} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
	}
	f.Fuzz(func(t *testing.T, body string, which uint8) {
		ep := []string{endpoints.Embeddings, endpoints.Rerank, endpoints.TEIRerank}[int(which)%3]
		e, _ := endpoints.Lookup(ep)
		rec := Record{Inputs: 2}
		cl := &call{c: &Client{endpoint: e}, rec: &rec, ctx: t.Context(), body: io.NopCloser(strings.NewReader(""))}
		cl.capCompletion, cl.capPrompt = UsageCaps(0, 1, 100)
		cl.takePooled([]byte(body), func(error) {})
		cl.settle()
		if rec.OK() {
			if rec.Results < 1 || rec.Results > 2 || rec.PromptTokens < 0 || rec.PromptTokens > 100+promptCapSlack || rec.OutputTokens != 0 {
				t.Fatalf("%q: a success with %+v", body, rec)
			}
		} else if rec.Error == "" {
			t.Fatalf("%q: failed without a message", body)
		}
	})
}
