package client

import (
	"io"
	"net/http"
	"testing"
)

// A base URL with a query string (Azure's ?api-version=) sends the query
// with every request, the endpoint's path before it.
func TestBaseURLWithAQuery(t *testing.T) {
	t.Parallel()
	type seen struct{ path, query string }
	got := make(chan seen, 4)
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.URL.Path, r.URL.RawQuery}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","choices":[{"message":{"content":"a"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	}))
	c := newTestClient(t, srv.URL, func(c *Config) {
		c.BaseURL = srv.URL + "/openai/deployments/d?api-version=2024-10-21"
		c.NoStream = true
	})
	rec := c.Do(t.Context(), request("r"))
	if rec.ErrorClass != ErrNone {
		t.Fatalf("request failed: %s %s", rec.ErrorClass, rec.Error)
	}
	if s := <-got; s.path != "/openai/deployments/d/chat/completions" || s.query != "api-version=2024-10-21" {
		t.Errorf("the server saw path %q query %q", s.path, s.query)
	}
}
