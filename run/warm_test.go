package run

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/client"
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

// TestWarmGoesOnOnceAnswered: an engine that keeps breaking every
// connection but its first as it opens (it restarts, or drops them) has
// them opened again for warmRetryFor; having answered one, the warm-up
// goes on, its note saying how many it left unopened and why.
func TestWarmGoesOnOnceAnswered(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(breakConnections(func(n int) bool { return n > 1 }))
	defer srv.Close()
	cl, err := client.New(client.Config{BaseURL: srv.URL + "/v1", Model: "m", MaxConns: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	began := time.Now()
	note, err := warm(t.Context(), cl, 3, nil)
	took := time.Since(began)
	if err != nil || !strings.Contains(note, "opened 1 of 3 connections before the run") || !strings.Contains(note, "connection reset by peer") {
		t.Fatalf("warm: note %q, error %v: want the run to go on, saying 1 of 3 opened and why", note, err)
	}
	if took < warmRetryFor-2*time.Second {
		t.Errorf("gave up after %v, before warmRetryFor (%v)", took, warmRetryFor)
	}
}
