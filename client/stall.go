package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// A stream that goes silent (a server that never sends its headers, or
// stops sending mid-stream while keeping the connection) is noticed by one
// watchdog per client (WatchStalls), not by a timer per request reset at
// every chunk: the read path only counts its reads (one atomic add per
// body read), and the watchdog compares each request's count a few times
// per stall time (docs/decisions/0046).

// errStalled is the cause of a request context the watchdog canceled: the
// record's class is ErrStalled.
var errStalled = errors.New("stalled: nothing arrived from the server for the stall time")

// stallState is a request's side of the watchdog. reads counts body reads
// that returned bytes; the response headers count through
// callTrace.firstByte. It wraps the response body once a response arrived.
type stallState struct {
	reads atomic.Int64
	body  io.ReadCloser
	// set by the watchdog when it ends the request: the silence it saw
	stalledFor atomic.Int64
	stallTime  atomic.Int64
}

// watch puts the count in the path of cl's response body, when it has one.
func (s *stallState) watch(cl *call) {
	if cl.body == nil {
		return
	}
	s.body = cl.body
	cl.body = s
}

// Read is the response body's Read, counted: the one cost on the per-chunk path.
func (s *stallState) Read(p []byte) (int, error) {
	n, err := s.body.Read(p)
	if n > 0 {
		s.reads.Add(1)
	}
	return n, err
}

func (s *stallState) Close() error { return s.body.Close() }

// explain words a stalled record's error: how long it was silent, and after
// what (the context's own "context canceled" says nothing).
func (s *stallState) explain(rec *Record) {
	if rec.ErrorClass != ErrStalled {
		return
	}
	what := "no response headers"
	switch {
	case len(rec.Chunks) > 0:
		what = fmt.Sprintf("%d output chunks", len(rec.Chunks))
	case rec.FirstByte > 0:
		what = fmt.Sprintf("status %d and no output chunk", rec.Status)
	}
	rec.Error = fmt.Sprintf("stalled: nothing from the server for %s (stall_timeout %s) after %s",
		time.Duration(s.stalledFor.Load()).Round(time.Millisecond), time.Duration(s.stallTime.Load()), what)
}

// inflightSet is every request of a client in flight: Do adds and removes
// each (one lock per request, none per chunk).
type inflightSet struct {
	mu    sync.Mutex
	calls map[*call]*stallMark
}

// stallMark is the watchdog's own look at one request: the progress it
// last saw and since when (run clock). Only the watchdog and Silent read it,
// under inflightSet.mu.
type stallMark struct {
	cancel context.CancelCauseFunc
	seen   int64
	since  time.Duration
	added  time.Duration
}

func (s *inflightSet) add(cl *call, cancel context.CancelCauseFunc) {
	now := cl.c.since()
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[*call]*stallMark{}
	}
	s.calls[cl] = &stallMark{cancel: cancel, since: now, added: now}
	s.mu.Unlock()
}

func (s *inflightSet) remove(cl *call) {
	s.mu.Lock()
	delete(s.calls, cl)
	s.mu.Unlock()
}

// progress is what a request has received so far, as one number that only
// grows: its body reads, and one for its response headers.
func progress(cl *call) int64 {
	p := cl.stall.reads.Load() << 1
	if cl.firstByte.Load() != 0 {
		p |= 1
	}
	return p
}

// Silent says how many requests in flight have received no byte at all
// (not even response headers), and how long the oldest of them has waited
// since it was handed to the transport: what a run that drains is waiting on.
func (c *Client) Silent() (n int, longest time.Duration) {
	now := c.since()
	c.inflight.mu.Lock()
	defer c.inflight.mu.Unlock()
	for cl, m := range c.inflight.calls {
		if progress(cl) == 0 {
			n++
			longest = max(longest, now-m.added)
		}
	}
	return n, longest
}

// StallTick is how often WatchStalls looks, for a stall time: an eighth of
// it, between 5 ms and 250 ms. A request silent for the stall time is ended
// within two ticks after it (its last read is noticed at the next look).
func StallTick(stall time.Duration) time.Duration {
	return min(max(stall/8, 5*time.Millisecond), 250*time.Millisecond)
}

// WatchStalls ends, as ErrStalled, every request of c from which nothing
// has arrived for stall (no response headers, or no body byte since the
// last one), until ctx is done. stall <= 0 watches nothing. One watchdog
// per client; a request's silence is measured from when it was handed to
// the transport, then from its last read.
func (c *Client) WatchStalls(ctx context.Context, stall time.Duration) {
	if stall <= 0 {
		return
	}
	t := time.NewTicker(StallTick(stall))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.inflight.scan(c.since(), stall)
		}
	}
}

// scan is one look of the watchdog at every request in flight.
func (s *inflightSet) scan(now, stall time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for cl, m := range s.calls {
		p := progress(cl)
		switch {
		case p != m.seen:
			m.seen, m.since = p, now
		case now-m.since >= stall && m.cancel != nil:
			cl.stall.stallTime.Store(int64(stall))
			cl.stall.stalledFor.Store(int64(now - m.since))
			m.cancel(errStalled)
			m.cancel = nil // once
		}
	}
}
