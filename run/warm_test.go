package run

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestStopWhileOpeningConnections: an engine whose /v1/models hangs holds
// the connection warm-up; a stop (the first Ctrl-C or SIGTERM) ends it at
// once instead of only a SIGKILL.
func TestStopWhileOpeningConnections(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	defer close(release)
	path := writeScenario(t, `
name: hung
model: m
engine: {kind: external, base_url: "`+srv.URL+`/v1"}
workload: {concurrency: 4, requests: 8}
`)
	stop := make(chan struct{})
	time.AfterFunc(300*time.Millisecond, func() { close(stop) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	began := time.Now()
	_, err := Run(ctx, Config{Scenario: path, RunsDir: t.TempDir(), Stop: stop}, IO{})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("run error %v, want it interrupted", err)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("the stop took %v to end the run", d)
	}
}
