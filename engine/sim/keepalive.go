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

// connState counts the requests of one connection (set by Start's ConnContext).
type connState struct{ n atomic.Int64 }

type reqConnKey struct{}

// reqConn is one request's place on its connection.
type reqConn struct {
	request int  // 1 = the connection's first request
	closed  bool // the engine closes the connection after the response
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

func connContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, &connState{})
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
			rc := &reqConn{request: int(cs.n.Add(1))}
			if maxRequests > 0 && rc.request >= maxRequests && h1 {
				rc.closed = true
				w.Header().Set("Connection", "close")
			}
			r = r.WithContext(context.WithValue(r.Context(), reqConnKey{}, rc))
		}
		if header != "" && h1 {
			w.Header().Set("Keep-Alive", header)
		}
		next.ServeHTTP(w, r)
	})
}
