package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
)

// interrupter turns interrupts — SIGINT/SIGTERM, or Ctrl-C pressed in the TUI —
// into the two-stage stop: the first closes stop (no new arrivals, in-flight
// requests finish), the second aborts the in-flight requests.
type interrupter struct {
	stop  chan struct{}
	abort context.CancelFunc
	log   io.Writer
	say   bool // print what happens (not while the TUI owns the terminal)

	mu sync.Mutex
	n  int
}

func newInterrupter(stop chan struct{}, abort context.CancelFunc, log io.Writer, say bool) *interrupter {
	return &interrupter{stop: stop, abort: abort, log: log, say: say}
}

// interrupt is one interrupt; safe from any goroutine.
func (i *interrupter) interrupt() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.n++
	switch i.n {
	case 1:
		if i.say {
			fmt.Fprintln(i.log, "llmbench: stopping arrivals and letting in-flight requests finish; interrupt again to abort them")
		}
		close(i.stop)
	case 2:
		if i.say {
			fmt.Fprintln(i.log, "llmbench: aborting in-flight requests")
		}
		i.abort()
	}
}

// forward turns signals into interrupts until ctx is done.
func (i *interrupter) forward(ctx context.Context, sigs <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-sigs:
			if !ok {
				return
			}
			i.interrupt()
		}
	}
}
