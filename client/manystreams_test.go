package client

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestManyConcurrentStreams holds a few thousand streams open at once on
// loopback, each on its own connection, and loses none: the server answers
// no stream until every one has arrived, so they are all in flight together.
// (The 16,000-stream run, with memory per stream, is the benchmark command in
// client/BENCHMARKS.md: this test bounds the time, not the count.)
func TestManyConcurrentStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("opens thousands of sockets")
	}
	const (
		streams = 2000 // two file descriptors each in this process: client and server ends
		chunks  = 5
	)
	var arrived atomic.Int32
	all := make(chan struct{})
	srv, newConns := serveCounting(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if arrived.Add(1) == streams {
			close(all)
		}
		select {
		case <-all:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range fullStream("s", chunks) {
			_, _ = io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
	})
	c := newTestClient(t, srv.URL, func(cfg *Config) {
		cfg.MaxConns = streams
		cfg.Timeout = time.Minute
	})

	recs := make([]Record, streams)
	var wg sync.WaitGroup
	for i := range streams {
		wg.Go(func() { recs[i] = c.Do(t.Context(), request(fmt.Sprintf("r%d", i))) })
	}
	wg.Wait()

	lost := 0
	for _, rec := range recs {
		if !rec.OK() || len(rec.Chunks) != chunks {
			if lost++; lost <= 5 {
				t.Errorf("%s: %s %s, %d chunks", rec.ID, rec.ErrorClass, rec.Error, len(rec.Chunks))
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d streams lost", lost, streams)
	}
	if n := newConns.Load(); n != streams {
		t.Errorf("%d connections for %d concurrent streams, want one each", n, streams)
	}
}
