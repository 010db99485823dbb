// Package httppolicy is llmbench's one policy for every HTTP request it
// makes — model discovery, readiness probes, /metrics scrapes, Prometheus
// queries, calibration, the engine's context length and the measured
// requests — so that they all reach the engine the same way:
//
//   - direct: proxy variables from the environment (HTTP_PROXY,
//     HTTPS_PROXY, NO_PROXY) are ignored. A benchmark measures the engine,
//     not a proxy in front of it, and a scrape that went through a proxy
//     while the measured requests went direct would reconcile two different
//     paths. A run states that it ignored them (Ignored).
//   - no redirects followed: a 3xx is the answer, handed back to the caller
//     (which names it as a redirect, with its target). Following one would
//     re-send the API key to whatever host the Location names, and a 302
//     turns a POST into an empty GET that would count as a success.
//   - HTTP/1.1 and no transparent compression, as an engine's own clients
//     speak to it.
package httppolicy

import (
	"net"
	"net/http"
	"time"
)

// dialTimeout bounds connecting (and a TLS handshake): a request that
// cannot connect within it fails with class connect, whatever its own
// timeout.
const dialTimeout = 10 * time.Second

// idleTimeout is how long an idle pooled connection is kept.
const idleTimeout = 90 * time.Second

// Transport is the transport every request goes through, tuned for many
// long-lived streams:
//   - HTTP/1.1 only: one stream per connection, as the engines' own
//     benchmark clients do; HTTP/2 would multiplex every stream on one
//     connection and measure something else.
//   - The idle pool holds pool connections per host (at least 2; Go keeps
//     2 by default, so every later request beyond 2 would dial again).
//   - No cap on connections per host: a cap would queue requests inside the
//     transport, where the wait would silently count as server latency.
//   - No compression: a gzip layer would buffer SSE chunks.
//   - No proxy from the environment (the package comment says why): a
//     caller that wants one injects its own http.Client.
func Transport(pool int) *http.Transport {
	pool = max(pool, 2)
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	t := &http.Transport{
		Proxy:               nil, // direct, whatever the environment says (the package comment says why)
		DialContext:         d.DialContext,
		MaxIdleConns:        pool,
		MaxIdleConnsPerHost: pool,
		MaxConnsPerHost:     0,
		IdleConnTimeout:     idleTimeout,
		TLSHandshakeTimeout: dialTimeout,
		DisableCompression:  true,
		// Every connection holds both buffers for its lifetime. A request
		// is headers of a few hundred bytes then the body, which bufio
		// writes straight to the socket when it is larger than the buffer:
		// 1 KiB costs at most one more write per request and saves 3 KiB
		// per connection. The read buffer sets how much one read system
		// call may take when chunks queue up: it keeps Go's 4 KiB.
		WriteBufferSize: 1 << 10,
		ReadBufferSize:  4 << 10,
	}
	t.Protocols = new(http.Protocols)
	t.Protocols.SetHTTP1(true)
	return t
}

// Client is an HTTP client on Transport that follows no redirect, each
// request bounded by timeout (0 = none).
func Client(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: Transport(0), CheckRedirect: NoRedirect}
}

// NoRedirect is an http.Client's CheckRedirect that hands the 3xx back as
// the response instead of following it.
func NoRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// IsRedirect reports whether an HTTP status asks the client to go elsewhere.
func IsRedirect(status int) bool { return status >= 300 && status < 400 }

// proxyVariables are the environment variables Go's default transport would
// have read.
var proxyVariables = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}

// Ignored names the proxy variables set in the environment getenv reads
// that llmbench's requests ignore, for the run to say so (nil when none is
// set).
func Ignored(getenv func(string) string) []string {
	var out []string
	for _, v := range proxyVariables {
		if getenv(v) != "" {
			out = append(out, v)
		}
	}
	return out
}
