package httppolicy

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

func TestClientFollowsNoRedirectAndUsesNoProxy(t *testing.T) {
	t.Parallel()
	hits := 0
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer target.Close()
	origin := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusFound))
	defer origin.Close()
	c := Client(0)
	resp, err := c.Get(origin.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || hits != 0 || !IsRedirect(resp.StatusCode) {
		t.Errorf("status %d, target reached %d times; want the 302 handed back, the target untouched", resp.StatusCode, hits)
	}
	if tr := c.Transport.(*http.Transport); tr.Proxy != nil || !tr.DisableCompression {
		t.Error("the transport reads a proxy from the environment or asks for compression")
	}
}

func TestIgnored(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "localhost"}
	got := Ignored(func(k string) string { return env[k] })
	if !slices.Equal(got, []string{"HTTPS_PROXY"}) {
		t.Errorf("Ignored = %v, want [HTTPS_PROXY]", got)
	}
	if got := Ignored(func(string) string { return "" }); got != nil {
		t.Errorf("Ignored of a clean environment = %v", got)
	}
}
