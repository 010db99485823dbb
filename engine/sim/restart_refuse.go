package sim

import (
	"net"
	"sync"
	"time"
)

// Downtime is one restart's downtime, on the wall clock with its monotonic
// reading (time.Now): when the engine went down and when it served again.
// With Faults.RestartRefuse, Start is when the listening socket was closed
// and End when the engine listened again; without, chat requests got 503
// from Start to End (Start + RestartDowntime).
type Downtime struct {
	Start, End time.Time
}

// Length is how long the engine was down.
func (d Downtime) Length() time.Duration { return d.End.Sub(d.Start) }

// Downtimes is every restart's downtime so far, in order (ground truth for
// what a client must report as an outage). A downtime still running has
// its planned end.
func (e *Engine) Downtimes() []Downtime {
	e.downtimesMu.Lock()
	defer e.downtimesMu.Unlock()
	return append([]Downtime(nil), e.downtimes...)
}

// goDown starts a restart's downtime: with Faults.RestartRefuse the
// listener stops accepting and every open connection is closed, until the
// gate reopens after RestartDowntime; without, the handlers answer 503
// (downUntil). Either way the downtime is kept as ground truth.
func (e *Engine) goDown() {
	down := e.cfg.Faults.RestartDowntime
	if down <= 0 {
		return
	}
	start := time.Now()
	e.downtimesMu.Lock()
	i := len(e.downtimes)
	e.downtimes = append(e.downtimes, Downtime{Start: start, End: start.Add(down)})
	e.downtimesMu.Unlock()
	if e.gate == nil {
		return
	}
	e.gate.close(func(up time.Time) {
		e.downtimesMu.Lock()
		e.downtimes[i].End = up
		e.downtimesMu.Unlock()
	})
	e.closeConns()
}

// closeConns closes every open connection, as a process that exits does:
// a client reading a stream sees it cut, one that reuses an idle
// connection finds it dead.
func (e *Engine) closeConns() {
	e.connsMu.Lock()
	defer e.connsMu.Unlock()
	for c := range e.conns {
		_ = c.Close()
	}
}

// gateListener is the engine's listener under Faults.RestartRefuse: a
// restart closes the socket, so that connecting is refused as it is while a
// real engine restarts, and listens again on the same address after the
// downtime. net/http's Serve keeps calling Accept, which waits across the gap.
type gateListener struct {
	addr net.Addr
	down time.Duration

	mu     sync.Mutex
	ln     net.Listener  // nil while down
	up     chan struct{} // closed when listening again (or for good)
	closed bool          // Close was called: the server is stopping
}

func newGateListener(ln net.Listener, down time.Duration) *gateListener {
	up := make(chan struct{})
	close(up)
	return &gateListener{addr: ln.Addr(), down: down, ln: ln, up: up}
}

// Accept waits for the next connection, across downtimes.
func (g *gateListener) Accept() (net.Conn, error) {
	for {
		g.mu.Lock()
		ln, up, closed := g.ln, g.up, g.closed
		g.mu.Unlock()
		if closed {
			return nil, net.ErrClosed
		}
		if ln == nil {
			<-up
			continue
		}
		c, err := ln.Accept()
		if err == nil {
			return c, nil
		}
		g.mu.Lock()
		wentDown := g.ln != ln && !g.closed
		g.mu.Unlock()
		if !wentDown {
			return nil, err
		}
	}
}

// close takes the socket down for the downtime; reopened is told when it
// listens again.
func (g *gateListener) close(reopened func(time.Time)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || g.ln == nil {
		return
	}
	_ = g.ln.Close()
	g.ln, g.up = nil, make(chan struct{})
	time.AfterFunc(g.down, func() { g.reopen(reopened) })
}

// reopenTries bounds listening again: the address is ours (SO_REUSEADDR is
// Go's default), so only a port taken in the gap can fail it.
const reopenTries = 200

func (g *gateListener) reopen(reopened func(time.Time)) {
	for try := 0; try < reopenTries; try++ {
		g.mu.Lock()
		if g.closed {
			g.mu.Unlock()
			return
		}
		ln, err := net.Listen(g.addr.Network(), g.addr.String())
		if err == nil {
			g.ln = ln
			close(g.up)
			g.mu.Unlock()
			reopened(time.Now())
			return
		}
		g.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	g.Close() // the port was taken: the engine stays down, and Serve returns
}

// Close stops the listener for good (the server's Shutdown or Close).
func (g *gateListener) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	var err error
	if g.ln != nil {
		err = g.ln.Close()
	} else {
		close(g.up)
	}
	return err
}

// Addr is the address it listens on, down or up.
func (g *gateListener) Addr() net.Addr { return g.addr }
