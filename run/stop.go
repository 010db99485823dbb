package run

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
)

// Interrupter turns interrupts — signals, or Ctrl-C pressed in the TUI,
// which in raw mode is a key press, not a signal — into a run's two-stage
// stop: the first closes Stop (no new arrivals, in-flight requests finish),
// the second aborts the in-flight requests (Config.Stop and Run's context).
type Interrupter struct {
	stop  chan struct{}
	abort context.CancelFunc
	log   io.Writer
	say   bool // print what happens (not while the TUI owns the terminal)

	mu sync.Mutex
	n  int
}

// NewInterrupter makes an Interrupter whose second interrupt calls abort;
// with say, it tells log what each interrupt does.
func NewInterrupter(abort context.CancelFunc, log io.Writer, say bool) *Interrupter {
	return &Interrupter{stop: make(chan struct{}), abort: abort, log: log, say: say}
}

// Stop is closed by the first interrupt: a run's Config.Stop.
func (i *Interrupter) Stop() chan struct{} { return i.stop }

// Interrupt is one interrupt; safe from any goroutine.
func (i *Interrupter) Interrupt() {
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

// Forward turns signals into interrupts until ctx is done or sigs closes.
func (i *Interrupter) Forward(ctx context.Context, sigs <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-sigs:
			if !ok {
				return
			}
			i.Interrupt()
		}
	}
}
