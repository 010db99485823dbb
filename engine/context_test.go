package engine

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/engines"
)

// TestReadContext: the context as llama.cpp's /props and vLLM's /v1/models
// state it, read from a real server on loopback; answers without it are
// errors naming what was asked.
func TestReadContext(t *testing.T) {
	answers := map[string]string{
		"/props":     `{"default_generation_settings":{"n_ctx":512,"params":{}},"total_slots":4}`,
		"/v1/models": `{"object":"list","data":[{"id":"m","max_model_len":32768}]}`,
		"/bad":       `{"data":[]}`,
		"/frac":      `{"n":12.5}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		a, ok := answers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(a))
	}))
	defer srv.Close()
	llama, _ := engines.Lookup(engines.LlamaCpp)
	vllm, _ := engines.Lookup(engines.VLLM)
	for _, c := range []struct {
		name string
		api  engines.ContextAPI
		want int
		err  string
	}{
		{"llama.cpp per-slot n_ctx", llama.Context, 512, ""},
		{"vLLM max_model_len", vllm.Context, 32768, ""},
		{"none stated", engines.ContextAPI{}, 0, ""},
		{"empty model list", engines.ContextAPI{Path: "/bad", Field: "data.max_model_len"}, 0, "no positive whole data.max_model_len"},
		{"not whole", engines.ContextAPI{Path: "/frac", Field: "n"}, 0, "no positive whole n"},
		{"not served", engines.ContextAPI{Path: "/nope", Field: "n"}, 0, "404"},
	} {
		n, err := ReadContext(t.Context(), srv.Client(), srv.URL+"/v1", "k", c.api)
		if n != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %d, %v; want %d and an error containing %q", c.name, n, err, c.want, c.err)
		}
	}
}
