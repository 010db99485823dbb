package sim

import (
	"context"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Keep-alive: llama.cpp (cpp-httplib) answers every request with
// "Keep-Alive: timeout=5, max=100" and closes a connection idle for 5 s or
// used for 100 requests, so a client that pools connections meets closed
// ones. Params.KeepAliveTimeout and KeepAliveMax set the same for any
// dialect. Each request's rank on its connection goes to its truth.

type connKey struct{}

// connState counts the requests of one connection (set by Start's
// ConnContext) and holds the connection, which Params.CloseAfterStream closes.
type connState struct {
	n    atomic.Int64
	conn net.Conn
}

type reqConnKey struct{}

// reqConn is one request's place on its connection.
type reqConn struct {
	request int  // 1 = the connection's first request
	closed  bool // the engine closes the connection after the response, saying so (Connection: close at KeepAliveMax)
	conn    net.Conn
	h1      bool
}

// Why the engine closed a connection after a response (RequestTruth.ConnClose).
const (
	// ConnCloseMax: the connection's KeepAliveMax-th request; the
	// response said Connection: close.
	ConnCloseMax = "keep_alive_max"
	// ConnCloseAfterStream: Params.CloseAfterStream; the response said
	// nothing and the socket closed once it was written.
	ConnCloseAfterStream = "after_stream"
)

// closeAfterStream marks a streamed request's connection to be closed once
// its response is written (when it turns idle: countActive), and says so in
// its truth. A connection that also reached KeepAliveMax keeps that reason.
func (e *Engine) closeAfterStream(r *http.Request, t *RequestTruth) {
	c := connOf(r)
	if !e.cfg.Params.CloseAfterStream || c == nil || !c.h1 || c.conn == nil {
		return
	}
	e.connsMu.Lock()
	if e.closing == nil {
		e.closing = map[net.Conn]bool{}
	}
	e.closing[c.conn] = true
	e.connsMu.Unlock()
	if !t.ConnClosed {
		t.ConnClosed, t.ConnClose = true, ConnCloseAfterStream
	}
}

func connOf(r *http.Request) *reqConn {
	c, _ := r.Context().Value(reqConnKey{}).(*reqConn)
	return c
}

// keepAlive is the keep-alive policy: idle timeout and requests per
// connection (0 = none).
func (e *Engine) keepAlive() (timeout time.Duration, maxRequests int) {
	p := e.cfg.Params
	timeout, maxRequests = p.KeepAliveTimeout, p.KeepAliveMax
	if e.cfg.Dialect == DialectLlamaCpp {
		if timeout == 0 {
			timeout = 5 * time.Second
		}
		if maxRequests == 0 {
			maxRequests = 100
		}
	}
	return timeout, maxRequests
}

func connContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, &connState{conn: c})
}

// withKeepAlive counts each connection's requests, closes a connection at
// its last allowed request and sets the Keep-Alive header (HTTP/1.x only:
// HTTP/2 has no connection headers).
func (e *Engine) withKeepAlive(next http.Handler) http.Handler {
	timeout, maxRequests := e.keepAlive()
	var header string
	if timeout > 0 {
		header = "timeout=" + strconv.Itoa(int(math.Ceil(timeout.Seconds())))
	}
	if maxRequests > 0 {
		if header != "" {
			header += ", "
		}
		header += "max=" + strconv.Itoa(maxRequests)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h1 := r.ProtoMajor == 1
		if cs, ok := r.Context().Value(connKey{}).(*connState); ok {
			rc := &reqConn{request: int(cs.n.Add(1)), conn: cs.conn, h1: h1}
			if maxRequests > 0 && rc.request >= maxRequests && h1 {
				rc.closed = true
				w.Header().Set("Connection", "close")
			}
			r = r.WithContext(context.WithValue(r.Context(), reqConnKey{}, rc))
		}
		if header != "" && h1 {
			w.Header().Set("Keep-Alive", header)
		}
		if h1 && e.cfg.Dialect == DialectLlamaCpp {
			w = errorCloser{w} // llamacpp_conform.go
		}
		next.ServeHTTP(w, r)
	})
}

// IdleCloses is how many requests Params.IdleCloseOnReuse left unread, each
// closing a connection that had sat idle past KeepAliveTimeout.
func (e *Engine) IdleCloses() int { return int(e.idleCloses.Load()) }

// closeIfIdle is Params.IdleCloseOnReuse: a request on an HTTP/1.x
// connection idle for the keep-alive timeout or longer is not read; the
// connection closes under it, before any answer byte. It reports whether
// it closed one (the request is then not the engine's: no truth, no metric).
func (e *Engine) closeIfIdle(w http.ResponseWriter, r *http.Request) bool {
	timeout, _ := e.keepAlive()
	c := connOf(r)
	if !e.cfg.Params.IdleCloseOnReuse || timeout <= 0 || c == nil || !c.h1 || c.request < 2 {
		return false
	}
	e.connsMu.Lock()
	since, ok := e.idleSince[c.conn]
	e.connsMu.Unlock()
	if !ok || e.now()-since < timeout {
		return false
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	e.idleCloses.Add(1) // before the close: the client may look as soon as it sees it
	_ = conn.Close()
	return true
}
