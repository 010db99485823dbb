package reconcile

import (
	"fmt"
	"slices"
	"time"

	"github.com/llmbench-org/llmbench/client"
)

// Connection closes, told apart (issue 20: 40% of requests against
// llama-server were resent, and the README blamed its 5-s idle close, when
// llama-server closes the connection after every streamed response). An
// engine closes a kept-alive connection in three ways, each seen differently
// by the client:
//
//   - after every response, or after its keep-alive max, saying so: the
//     response carries Connection: close (Record.ConnClose), and the next
//     request opens a new connection without a failed attempt;
//   - right after a response without a word (llama-server after a stream):
//     a request that takes the connection from the pool at once finds it
//     dead and is resent (Record.RetryIdle about 0); the others open new
//     connections;
//   - after the connection sat idle for the engine's keep-alive timeout: a
//     request that takes it just then finds it dead (RetryIdle about the
//     timeout).
//
// A dead connection's idle time tells the last two apart:
// closeAfterResponseIdle bounds "at once". A closed loop reuses a
// connection microseconds after the previous response (milliseconds on a
// busy host); keep-alive timeouts are seconds (llama.cpp's 5 s, uvicorn's
// 5 s, nginx's 75 s).
const closeAfterResponseIdle = 500 * time.Millisecond

// IDConnections names how the engine closed connections.
const IDConnections = "connections"

// connCounts is what the records say about connections.
type connCounts struct {
	requests   int // records that got a response
	newConns   int // records whose (last) attempt opened a new connection
	said       int // responses that said Connection: close
	resent     int // Σ Retries
	atOnce     int // requests resent after a connection dead right after a response
	afterIdle  int // requests resent after a connection closed while idle
	idleMax    time.Duration
	atOnceMax  time.Duration
	peak       int // the most requests in flight at once
	deadFailed int // requests that failed on a dead kept-alive connection (resends spent)
}

func countConnections(records []client.Record) connCounts {
	var c connCounts
	type edge struct {
		at time.Duration
		d  int
	}
	var edges []edge
	for i := range records {
		r := &records[i]
		if r.Status != 0 {
			c.requests++
		}
		if !r.Reused && r.Connected > 0 {
			c.newConns++
		}
		if r.ConnClose {
			c.said++
		}
		c.resent += r.Retries
		if r.Retries > 0 {
			if r.RetryIdle < closeAfterResponseIdle {
				c.atOnce++
				c.atOnceMax = max(c.atOnceMax, r.RetryIdle)
			} else {
				c.afterIdle++
				c.idleMax = max(c.idleMax, r.RetryIdle)
			}
			if r.ErrorClass == client.ErrConnect {
				c.deadFailed++
			}
		}
		if r.Sent > 0 && r.End >= r.Sent {
			edges = append(edges, edge{r.Sent, 1}, edge{r.End, -1})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return compareDur(a.at, b.at)
		}
		return a.d - b.d // an end before a start at the same instant
	})
	n := 0
	for _, e := range edges {
		n += e.d
		c.peak = max(c.peak, n)
	}
	return c
}

// connections names how the engine closed connections, when it closed any
// the client noticed: info, for each is the engine's normal behaviour and
// the client resends a request whose connection was dead before any answer
// byte (latencies count from when the request was written, so the resend
// and a new connection's dial are in the send delay, not in TTFT); a warning
// only when requests failed on dead connections after their resends.
func connections(records []client.Record) (Finding, bool) {
	c := countConnections(records)
	// Connections the engine closed without saying so and without a
	// failed reuse: every new connection beyond the first of each
	// concurrent request and beyond those announced.
	silent := c.newConns - c.peak - c.said
	if c.said == 0 && c.resent == 0 && silent <= 0 {
		return Finding{}, false
	}
	f := Finding{ID: IDConnections, Severity: Info}
	ev := evidence{}
	ev.set("requests", float64(c.requests))
	ev.set("new_connections", float64(c.newConns))
	ev.set("peak_in_flight", float64(c.peak))
	ev.set("retries", float64(c.resent))
	var clauses []string
	switch {
	case c.said > 0 && c.said >= c.requests:
		ev.set("close_every_response", float64(c.said))
		clauses = append(clauses, fmt.Sprintf("the engine closes the connection after every response and says so (Connection: close): each of the %d requests opened a new connection", c.requests))
	case c.said > 0:
		ev.set("close_keep_alive_max", float64(c.said))
		clauses = append(clauses, fmt.Sprintf("the engine closed a connection after about every %.0f requests and said so (Connection: close, its keep-alive max): %d of %d responses; the next request on each opened a new connection",
			float64(c.requests)/float64(c.said), c.said, c.requests))
	}
	if c.atOnce > 0 || (silent > 0 && 2*silent >= c.requests && c.afterIdle == 0) {
		ev.set("close_after_stream", float64(max(silent, c.atOnce)))
		ev.set("resent_after_response", float64(c.atOnce))
		clauses = append(clauses, fmt.Sprintf("the engine closes the connection right after a response without saying so (no Connection: close; llama-server does after every stream): %d of %d requests opened a new connection, and %d took a connection it had closed at once (idle at most %s) and were resent",
			c.newConns, c.requests, c.atOnce, dur(c.atOnceMax.Seconds())))
	} else if silent > 0 && c.afterIdle == 0 {
		ev.set("closed_unannounced", float64(silent))
		clauses = append(clauses, fmt.Sprintf("the engine closed %d connections without saying so: %d new connections for at most %d requests in flight", silent, c.newConns, c.peak))
	}
	if c.afterIdle > 0 {
		ev.set("close_idle", float64(c.afterIdle))
		ev.set("idle_max_s", c.idleMax.Seconds())
		clauses = append(clauses, fmt.Sprintf("%d requests took a connection the engine had closed for sitting idle past its keep-alive timeout (idle up to %s) and were resent", c.afterIdle, dur(c.idleMax.Seconds())))
	}
	if c.deadFailed > 0 {
		f.Severity = Warn
		ev.set("failed_on_dead_connections", float64(c.deadFailed))
		clauses = append(clauses, fmt.Sprintf("%d requests failed on dead connections after their resends", c.deadFailed))
	} else if c.resent > 0 {
		clauses = append(clauses, "every resend was answered: latencies count from when each request was written, the resend and a new connection's dial are in the send delay")
	}
	f.Verdict = joinClauses(clauses...)
	f.Evidence = ev.orNil()
	return f, true
}
