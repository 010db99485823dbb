package client

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/scrape"
)

// received is a request as the server read it, raw.
type received struct {
	path   string
	header http.Header
	host   string
	body   []byte
}

// capturing wraps h and hands each request it receives to the channel.
func capturing(h http.HandlerFunc) (http.HandlerFunc, <-chan received) {
	got := make(chan received, 16)
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{path: r.URL.Path, header: r.Header.Clone(), host: r.Host, body: body}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h(w, r)
	}, got
}

// members decodes a JSON object body, failing on a repeated key.
func members(t *testing.T, body []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("body %s is not an object", body)
	}
	out := map[string]any{}
	for dec.More() {
		k, _ := dec.Token()
		key := k.(string)
		if _, dup := out[key]; dup {
			t.Fatalf("body repeats %q: %s", key, body)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		out[key] = v
	}
	return out
}

func TestDoEndpointsAndStreaming(t *testing.T) {
	t.Parallel()
	nonStreamChat := `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi","reasoning_content":"hm"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":7,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":1}}}`
	nonStreamCompletion := `{"id":"x","object":"text_completion","choices":[{"index":0,"text":"hi there","finish_reason":"length"}],"usage":{"prompt_tokens":7,"completion_tokens":3}}`
	completionStream := []string{
		`data: {"id":"x","choices":[{"text":"a","index":0,"finish_reason":null}]}` + "\n\n",
		`data: {"id":"x","choices":[{"text":"b","index":0,"finish_reason":null}]}` + "\n\n",
		`data: {"id":"x","choices":[{"text":"","index":0,"finish_reason":"length"}]}` + "\n\n",
		usageEvent("x", 7, 2, 0), doneEvent,
	}
	json200 := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, body)
		}
	}
	tests := []struct {
		name     string
		edit     func(*Config)
		handler  http.HandlerFunc
		path     string
		body     map[string]any // what the server must have received
		accept   string
		chunks   int
		output   int
		cached   int
		reason   int
		noStream bool
	}{
		{
			name:    "chat, streamed (default)",
			handler: streamOf(fullStream("x", 2)...),
			path:    "/v1/chat/completions",
			body: map[string]any{"model": "test-model", "messages": []any{map[string]any{"role": "user", "content": "hello"}},
				"stream": true, "stream_options": map[string]any{"include_usage": true}, "max_tokens": 16.0, "min_tokens": 16.0, "ignore_eos": true, "rid": "r"},
			accept: "text/event-stream", chunks: 2, output: 2, cached: 3,
		},
		{
			name:    "chat, not streamed",
			edit:    func(c *Config) { c.NoStream = true },
			handler: json200(nonStreamChat),
			path:    "/v1/chat/completions",
			body: map[string]any{"model": "test-model", "messages": []any{map[string]any{"role": "user", "content": "hello"}},
				"stream": false, "max_tokens": 16.0, "min_tokens": 16.0, "ignore_eos": true, "rid": "r"},
			accept: "application/json", output: 3, cached: 2, reason: 1, noStream: true,
		},
		{
			name:    "completions, streamed",
			edit:    func(c *Config) { c.Endpoint = EndpointCompletions },
			handler: streamOf(completionStream...),
			path:    "/v1/completions",
			body: map[string]any{"model": "test-model", "prompt": "You are terse.\nhello", "stream": true,
				"stream_options": map[string]any{"include_usage": true}, "max_tokens": 16.0, "min_tokens": 16.0, "ignore_eos": true, "rid": "r"},
			accept: "text/event-stream", chunks: 2, output: 2,
		},
		{
			name:    "completions, not streamed",
			edit:    func(c *Config) { c.Endpoint = EndpointCompletions; c.NoStream = true },
			handler: json200(nonStreamCompletion),
			path:    "/v1/completions",
			body: map[string]any{"model": "test-model", "prompt": "You are terse.\nhello", "stream": false,
				"max_tokens": 16.0, "min_tokens": 16.0, "ignore_eos": true, "rid": "r"},
			accept: "application/json", output: 3, noStream: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, got := capturing(tt.handler)
			srv := serve(t, h)
			c := newTestClient(t, srv.URL, tt.edit)
			r := request("r")
			if strings.Contains(tt.path, "/v1/completions") {
				r.Messages = append([]Message{{Role: "system", Content: "You are terse."}}, r.Messages...)
			}

			rec := c.Do(t.Context(), r)

			wantClass(t, rec, ErrNone)
			checkTimeline(t, rec)
			sent := <-got
			if sent.path != tt.path || sent.header.Get("Accept") != tt.accept || sent.header.Get("Content-Type") != "application/json" {
				t.Errorf("path %s, Accept %q, Content-Type %q; want %s, %q, application/json", sent.path, sent.header.Get("Accept"), sent.header.Get("Content-Type"), tt.path, tt.accept)
			}
			if d := cmp.Diff(tt.body, members(t, sent.body)); d != "" {
				t.Errorf("request body (-want +got):\n%s", d)
			}
			if len(rec.Chunks) != tt.chunks || rec.OutputTokens != tt.output || rec.CachedTokens != tt.cached || rec.ReasoningTokens != tt.reason || rec.NoStream != tt.noStream {
				t.Errorf("chunks %d, output %d, cached %d, reasoning %d, no stream %v; want %d %d %d %d %v",
					len(rec.Chunks), rec.OutputTokens, rec.CachedTokens, rec.ReasoningTokens, rec.NoStream, tt.chunks, tt.output, tt.cached, tt.reason, tt.noStream)
			}
			if _, ok := rec.TTFT(); ok == tt.noStream {
				t.Errorf("TTFT measured: %v, with no stream %v", ok, tt.noStream)
			}
			if rec.FinishReason == "" || rec.ServerID != "x" || rec.E2E() <= 0 {
				t.Errorf("finish %q, server id %q, E2E %v", rec.FinishReason, rec.ServerID, rec.E2E())
			}
		})
	}
}

func TestDoNotStreamedFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  int
		body    string
		class   ErrorClass
		errHas  string
		endpoit string
	}{
		{"429 with an OpenAI error", http.StatusTooManyRequests, `{"error":{"message":"slow down","type":"rate_limit_error"}}`, ErrHTTPStatus, "429 Too Many Requests: slow down (type rate_limit_error)", ""},
		{"400 from FastAPI", http.StatusBadRequest, `{"detail":"prompt too long"}`, ErrHTTPStatus, "prompt too long", EndpointCompletions},
		{"500 in plain text", http.StatusInternalServerError, "engine exploded\n", ErrHTTPStatus, "engine exploded", ""},
		{"an error object in a 200", http.StatusOK, `{"error":{"message":"context overflow","code":400}}`, ErrStreamBroken, "error response after 0 output chunks: context overflow (code 400)", ""},
		{"not JSON", http.StatusOK, `data: {"id":"x"}`, ErrMalformedChunk, "response", ""},
		{"no finish_reason", http.StatusOK, `{"id":"x","choices":[{"message":{"content":"a"}}]}`, ErrStreamBroken, "without a finish_reason", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			c := newTestClient(t, srv.URL, func(c *Config) { c.NoStream = true; c.Endpoint = tt.endpoit })

			rec := c.Do(t.Context(), request("r"))

			wantClass(t, rec, tt.class)
			checkTimeline(t, rec)
			if !strings.Contains(rec.Error, tt.errHas) || rec.Status != tt.status {
				t.Errorf("error %q, status %d; want an error holding %q, status %d", rec.Error, rec.Status, tt.errHas, tt.status)
			}
		})
	}
}

func TestDoCompletionsStreamHTTPError(t *testing.T) {
	t.Parallel()
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":"Model is overloaded","error_type":"overloaded"}`)
	}))
	c := newTestClient(t, srv.URL, func(c *Config) { c.Endpoint = EndpointCompletions })

	rec := c.Do(t.Context(), request("r"))

	wantClass(t, rec, ErrHTTPStatus)
	if rec.Status != http.StatusServiceUnavailable || !strings.Contains(rec.Error, "Model is overloaded") {
		t.Errorf("status %d, error %q", rec.Status, rec.Error)
	}
}

func TestDoExtraBody(t *testing.T) {
	t.Parallel()
	extra := map[string]any{
		"temperature":    0.7,
		"top_p":          0.9,
		"logprobs":       true,
		"lora_path":      "adapter-a",
		"max_tokens":     999, // the request's own wins
		"min_tokens":     5,   // sent only when the request sets none
		"ignore_eos":     false,
		"rid":            "not-the-id",
		"stream_options": map[string]any{"continuous_usage_stats": true, "include_usage": false},
	}
	tests := []struct {
		name string
		edit func(*Config)
		req  func(*Request)
		want map[string]any
	}{
		{
			name: "the request's own keys win",
			want: map[string]any{"model": "test-model", "messages": []any{map[string]any{"role": "user", "content": "hello"}}, "stream": true,
				"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true},
				"max_tokens":     16.0, "min_tokens": 16.0, "ignore_eos": true, "rid": "r",
				"temperature": 0.7, "top_p": 0.9, "logprobs": true, "lora_path": "adapter-a"},
		},
		{
			name: "extra keys fill what the request leaves unset",
			edit: func(c *Config) { c.IncludeUsage = false; c.Dialect = "" },
			req:  func(r *Request) { r.MaxTokens, r.MinTokens, r.IgnoreEOS = 0, 0, false },
			want: map[string]any{"model": "test-model", "messages": []any{map[string]any{"role": "user", "content": "hello"}}, "stream": true,
				"stream_options": map[string]any{"include_usage": false, "continuous_usage_stats": true},
				"max_tokens":     999.0, "min_tokens": 5.0, "ignore_eos": false, "rid": "not-the-id",
				"temperature": 0.7, "top_p": 0.9, "logprobs": true, "lora_path": "adapter-a"},
		},
		{
			name: "not streamed: no stream_options",
			edit: func(c *Config) { c.NoStream = true },
			want: map[string]any{"model": "test-model", "messages": []any{map[string]any{"role": "user", "content": "hello"}}, "stream": false,
				"max_tokens": 16.0, "min_tokens": 16.0, "ignore_eos": true, "rid": "r",
				"temperature": 0.7, "top_p": 0.9, "logprobs": true, "lora_path": "adapter-a"},
		},
		{
			name: "completions",
			edit: func(c *Config) { c.Endpoint = EndpointCompletions },
			want: map[string]any{"model": "test-model", "prompt": "hello", "stream": true,
				"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true},
				"max_tokens":     16.0, "min_tokens": 16.0, "ignore_eos": true, "rid": "r",
				"temperature": 0.7, "top_p": 0.9, "logprobs": true, "lora_path": "adapter-a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, got := capturing(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/chat/completions") && strings.Contains(r.Header.Get("Accept"), "json") {
					_, _ = io.WriteString(w, `{"id":"s","choices":[{"message":{"content":"a"},"finish_reason":"stop"}]}`)
					return
				}
				writeEvents(w, fullStream("s", 1)...)
			})
			srv := serve(t, h)
			c := newTestClient(t, srv.URL, func(c *Config) {
				c.ExtraBody = extra
				if tt.edit != nil {
					tt.edit(c)
				}
			})
			r := request("r")
			if tt.req != nil {
				tt.req(&r)
			}

			rec := c.Do(t.Context(), r)

			wantClass(t, rec, ErrNone)
			if d := cmp.Diff(tt.want, members(t, (<-got).body)); d != "" {
				t.Errorf("request body (-want +got):\n%s", d)
			}
		})
	}
}

func TestNewRejectsBadExtras(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"extra model", func(c *Config) { c.ExtraBody = map[string]any{"model": "lora-a"} }, `"model"`},
		{"extra stream", func(c *Config) { c.ExtraBody = map[string]any{"stream": false} }, `"stream"`},
		{"extra messages", func(c *Config) { c.ExtraBody = map[string]any{"messages": []any{}} }, `"messages"`},
		{"extra prompt for completions", func(c *Config) { c.Endpoint = EndpointCompletions; c.ExtraBody = map[string]any{"prompt": "x"} }, `"prompt"`},
		{"stream_options not an object", func(c *Config) { c.ExtraBody = map[string]any{"stream_options": true} }, "stream_options"},
		{"extra that does not marshal", func(c *Config) { c.ExtraBody = map[string]any{"f": func() {}} }, "extra body"},
		{"unknown endpoint", func(c *Config) { c.Endpoint = "nonesuch" }, "unknown endpoint"},
		{"header name with a space", func(c *Config) { c.Headers = map[string]string{"X Tenant": "a"} }, "header name"},
		{"header value with a newline", func(c *Config) { c.Headers = map[string]string{"X-Tenant": "a\r\nX-Evil: 1"} }, "line break"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}
			tt.edit(&cfg)
			if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v, want an error about %s", err, tt.want)
			}
		})
	}
	// A prompt key is no concern of chat, nor messages of completions.
	for _, cfg := range []Config{
		{BaseURL: "http://127.0.0.1:1/v1", Model: "m", ExtraBody: map[string]any{"prompt": "x"}},
		{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Endpoint: EndpointCompletions, ExtraBody: map[string]any{"messages": "x"}},
	} {
		if _, err := New(cfg); err != nil {
			t.Errorf("New(%v) = %v", cfg.ExtraBody, err)
		}
	}
}

func TestDoHeaders(t *testing.T) {
	t.Parallel()
	headers := map[string]string{
		"X-Tenant":      "team-a",
		"Authorization": "Token gateway-key", // replaces the bearer of APIKey
		"X-Request-Id":  "not-the-id",        // the request's id wins
		"Host":          "engine.internal",
	}
	for _, edit := range []func(*Config){
		nil,
		func(c *Config) { c.Endpoint = EndpointCompletions },
		func(c *Config) { c.NoStream = true },
	} {
		h, got := capturing(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				http.NotFound(w, r)
				return
			}
			if strings.Contains(r.Header.Get("Accept"), "json") {
				_, _ = io.WriteString(w, `{"id":"s","choices":[{"message":{"content":"a"},"finish_reason":"stop"}]}`)
				return
			}
			writeEvents(w, fullStream("s", 1)...)
		})
		srv := serve(t, h)
		c := newTestClient(t, srv.URL, func(c *Config) {
			c.APIKey = "secret"
			c.Headers = headers
			if edit != nil {
				edit(c)
			}
		})
		if err := c.Warm(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		rec := c.Do(t.Context(), request("r"))
		wantClass(t, rec, ErrNone)
		for i := range 2 { // Warm's GET, then the request
			sent := <-got
			if sent.header.Get("X-Tenant") != "team-a" || sent.header.Get("Authorization") != "Token gateway-key" || sent.host != "engine.internal" {
				t.Errorf("%s %s: X-Tenant %q, Authorization %q, Host %q", sent.path, sent.header.Get("Accept"), sent.header.Get("X-Tenant"), sent.header.Get("Authorization"), sent.host)
			}
			if i == 1 && sent.header.Get("X-Request-Id") != "r" {
				t.Errorf("%s: X-Request-Id %q, want r", sent.path, sent.header.Get("X-Request-Id"))
			}
		}
	}
}

func TestDialects(t *testing.T) {
	t.Parallel()
	// Every dialect scrape knows is a dialect the client takes.
	want := append(scrape.DialectNames(), scrape.Auto)
	if d := cmp.Diff(want, DialectNames()); d != "" {
		t.Errorf("client dialects differ from scrape's (-scrape +client):\n%s", d)
	}
	fields := map[string]string{"sglang": "rid", "vllm": "request_id", "fastdeploy": "request_id"}
	for _, name := range append(DialectNames(), "") {
		field, err := IDField(name)
		if err != nil || field != fields[name] {
			t.Errorf("IDField(%q) = %q, %v; want %q", name, field, err, fields[name])
		}
		t.Run("dialect="+name, func(t *testing.T) {
			t.Parallel()
			h, got := capturing(streamOf(fullStream("s", 1)...))
			srv := serve(t, h)
			c := newTestClient(t, srv.URL, func(c *Config) { c.Dialect = name })
			wantClass(t, c.Do(t.Context(), request("req-9")), ErrNone)
			body := members(t, (<-got).body)
			for _, f := range []string{"rid", "request_id"} {
				if v, ok := body[f]; ok != (f == fields[name]) || ok && v != "req-9" {
					t.Errorf("body %s = %v (present %v); dialect %q's id field is %q", f, v, ok, name, fields[name])
				}
			}
		})
	}
	_, err := IDField("ollama")
	if err == nil || !strings.Contains(err.Error(), "llamacpp") || !slices.Contains(DialectNames(), "trtllm") {
		t.Errorf("IDField(ollama) = %v, want an error naming the known dialects", err)
	}
}
