package client

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// A measured request that meets a redirect does not follow it: the API key
// is never re-sent to the target (another host, as far as the client
// knows), a 302 never turns the POST into an empty GET counted ok, and the
// record names the redirect and its target, the target's secrets removed.
func TestRedirectsAreNotFollowed(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			var reached atomic.Int32
			target := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached.Add(1)
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, "data: [DONE]\n\n")
			}))
			origin := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Location", target.URL+r.URL.Path+"?token=leaked-token")
				w.WriteHeader(status)
			}))
			c := newTestClient(t, origin.URL, func(c *Config) { c.APIKey = "sk-never-resent-123" })

			rec := c.Do(t.Context(), request("r"))

			wantClass(t, rec, ErrRedirect)
			if reached.Load() != 0 {
				t.Errorf("the redirect's target got %d requests", reached.Load())
			}
			if rec.Status != status || !strings.Contains(rec.Error, "redirected to "+target.URL) || !strings.Contains(rec.Error, "not followed") {
				t.Errorf("status %d, error %q; want %d naming the target", rec.Status, rec.Error, status)
			}
			if strings.Contains(rec.Error, "leaked-token") {
				t.Errorf("the error keeps the target's secret: %q", rec.Error)
			}
		})
	}
}
