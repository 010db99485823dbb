package client

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/internal/quiet"
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
	// The premise is the machine's: every stream must reach the server
	// within the client's minute, since none is answered before all are.
	// Beside two CPU hogs under -race, at a load average of 20–30, the
	// 2,000 connections were not all open after a minute and every stream
	// timed out (2000 of 2000 "lost", truly: the server had not released
	// them). Streams that all arrived are checked exactly; a run where
	// some never arrived is a miss, run again while other processes took
	// the machine, inconclusive if they took it throughout, failed on a
	// quiet one.
	quiet.Retry{Within: 3 * time.Minute, QuietMisses: 2}.Run(t, func(int) []string {
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

		lost, timedOut := 0, 0
		for _, rec := range recs {
			if !rec.OK() || len(rec.Chunks) != chunks {
				lost++
				if rec.ErrorClass == ErrTimeout && len(rec.Chunks) == 0 {
					timedOut++
				}
			}
		}
		if n := int(arrived.Load()); n < streams && timedOut == lost {
			return []string{fmt.Sprintf("%d of %d streams reached the server within the client's %v timeout, so none was answered (%d timed out)", n, streams, time.Minute, timedOut)}
		}
		if lost > 0 {
			shown := 0
			for _, rec := range recs {
				if (!rec.OK() || len(rec.Chunks) != chunks) && shown < 5 {
					shown++
					t.Errorf("%s: %s %s, %d chunks", rec.ID, rec.ErrorClass, rec.Error, len(rec.Chunks))
				}
			}
			t.Fatalf("%d of %d streams lost", lost, streams)
		}
		if n := newConns.Load(); n != streams {
			t.Errorf("%d connections for %d concurrent streams, want one each", n, streams)
		}
		return nil
	})
}
