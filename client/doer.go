package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// sender sends every request the client makes for a Record (Client.post
// builds it): it sets Config.Headers and X-Request-Id, attaches an
// httptrace.ClientTrace, resends when a kept-alive connection turns out dead,
// and keeps the response body for the client's own SSE reader (sse.go).
// go-openai built and sent streamed chat requests through this seam (its
// ClientConfig.HTTPClient) until decision 0207: the client now marshals every
// body itself, which spares each stream go-openai's unused 4 KiB reader. See
// docs/decisions/0200-client-request-extras.md and 0207-client-at-the-floor.md.

// maxRetries bounds resends on dead kept-alive connections. Each resend needs
// the failed attempt to have used a reused connection, so the loop also ends
// as soon as the transport dials afresh.
const maxRetries = 3

// sender is what Client.post sends through; see the comment above.
type sender struct {
	next    *http.Client
	headers map[string]string // Config.Headers
}

// setHeaders applies Config.Headers to h (and to the request's Host).
func setHeaders(req *http.Request, headers map[string]string) {
	for k, v := range headers {
		if http.CanonicalHeaderKey(k) == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
}

// send sends req, whose body is body, for cl.
func (d *sender) send(req *http.Request, cl *call, body []byte) (*http.Response, error) {
	setHeaders(req, d.headers)
	if cl.id != "" {
		req.Header.Set("X-Request-Id", cl.id)
	}
	ctx := httptrace.WithClientTrace(req.Context(), cl.trace())
	cl.rec.Sent = cl.c.since()
	for {
		attempt := req.WithContext(ctx)
		attempt.Body = io.NopCloser(bytes.NewReader(body))
		attempt.ContentLength = int64(len(body))
		// GetBody lets the transport resend on its own when nothing was
		// written yet; the getConns count below notices it.
		attempt.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		cl.getConns.Store(0)
		cl.reused.Store(false)
		cl.idle.Store(0)
		cl.deadIdle.Store(-1)
		cl.dialStart.Store(0)
		cl.connected.Store(0)
		cl.wrote.Store(0)

		resp, err := d.next.Do(attempt)
		if n := cl.getConns.Load(); n > 1 {
			cl.rec.Retries += int(n - 1)
		}
		if n := cl.deadIdle.Load(); n >= 0 {
			// The transport resent on its own after a dead kept-alive
			// connection (nothing was written to it).
			cl.rec.RetryIdle = time.Duration(n)
		}
		if err == nil {
			cl.rec.Status = resp.StatusCode
			cl.rec.ConnClose = resp.Close
			cl.body = resp.Body
			return resp, nil
		}
		if !cl.resendable() || cl.rec.Retries >= maxRetries {
			return nil, err
		}
		cl.rec.Retries++
		cl.rec.RetryIdle = time.Duration(cl.idle.Load())
	}
}

// resendable reports whether the attempt that just failed can be sent again:
// it went out on a kept-alive connection, no response byte came back, and the
// request's own context is still live. That is the signature of a server
// closing an idle connection (llama.cpp does after its keep-alive timeout)
// while the request was on its way: the server never read it.
func (cl *call) resendable() bool {
	return cl.reused.Load() && cl.firstByte.Load() == 0 && cl.ctx.Err() == nil
}

// addMembers appends members, a run of `,"key":value` pairs, to the JSON
// object body. Client.post marshals the request with encoding/json, so body
// is one compact object; Client.extras never renders
// a key the marshalled body has (model, messages or prompt, stream), so no
// key is duplicated.
func addMembers(body, members []byte) ([]byte, error) {
	if len(members) == 0 {
		return body, nil
	}
	const space = " \t\r\n" // JSON's whitespace
	obj := bytes.Trim(body, space)
	if len(obj) < 2 || obj[0] != '{' || obj[len(obj)-1] != '}' {
		return nil, errors.New("client: request body is not a JSON object")
	}
	end := len(obj) - 1
	// An empty object takes the members without their leading comma.
	if len(bytes.Trim(obj[1:end], space)) == 0 {
		members = members[1:]
	}
	out := make([]byte, 0, end+len(members)+1)
	out = append(out, obj[:end]...)
	out = append(out, members...)
	return append(out, '}'), nil
}

// callTrace holds what httptrace reports about one call. The hooks may run on
// transport goroutines (a dial can even finish after the request gave up on
// it), so every field is atomic and Client.Do copies them into the Record at
// the end.
type callTrace struct {
	getConns  atomic.Int32 // connections asked for in the current attempt
	reused    atomic.Bool  // the current attempt's connection was kept alive
	dialStart atomic.Int64 // run-clock ns of the last dial start
	connected atomic.Int64 // run-clock ns a new connection was handed over
	firstByte atomic.Int64 // run-clock ns of the first response byte
	wrote     atomic.Int64 // run-clock ns the current attempt's request was fully written
	// idle is how long the current attempt's kept-alive connection had sat
	// in the pool (GotConnInfo.IdleTime); deadIdle that of the one before it
	// in the same attempt, which the transport found dead and replaced (-1:
	// none). Record.RetryIdle tells a close right after a response from an
	// idle close by it.
	idle     atomic.Int64
	deadIdle atomic.Int64
}

func (cl *call) trace() *httptrace.ClientTrace {
	now := func() int64 { return int64(cl.c.since()) }
	return &httptrace.ClientTrace{
		GetConn: func(string) { cl.getConns.Add(1) },
		DNSStart: func(httptrace.DNSStartInfo) {
			cl.dialStart.Store(now())
		},
		ConnectStart: func(string, string) {
			// DNS, when there is one, starts the dial.
			cl.dialStart.CompareAndSwap(0, now())
		},
		GotConn: func(info httptrace.GotConnInfo) {
			if cl.getConns.Load() > 1 && cl.reused.Load() {
				cl.deadIdle.Store(cl.idle.Load())
			}
			cl.idle.Store(int64(info.IdleTime))
			cl.reused.Store(info.Reused)
			if info.Reused {
				cl.connected.Store(0)
				cl.dialStart.Store(0)
			} else {
				cl.connected.Store(now())
			}
		},
		GotFirstResponseByte: func() { cl.firstByte.CompareAndSwap(0, now()) },
		// The request is on the wire: TTFT and E2E count from here, so
		// the client's own waiting (for a pooled connection, a dial, its
		// CPU) is reported apart instead of inside the engine's latency.
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				cl.wrote.Store(now())
			}
		},
	}
}

// copyTrace moves the trace into the record.
func (cl *call) copyTrace() {
	rec := cl.rec
	rec.FirstByte = time.Duration(cl.firstByte.Load())
	rec.Wrote = time.Duration(cl.wrote.Load())
	rec.Reused = cl.reused.Load()
	if c := cl.connected.Load(); c != 0 && !rec.Reused {
		rec.Connected = time.Duration(c)
		if s := cl.dialStart.Load(); s != 0 && s <= c {
			rec.ConnectDur = time.Duration(c - s)
		}
	}
}

// errRequestTimeout is the cause of a request context whose Timeout passed;
// it tells a timeout from a cancellation of the run.
var errRequestTimeout = errors.New("request timeout")

// errDrainTimeout is the cause used when the tail after [DONE] takes too long.
var errDrainTimeout = errors.New("drain after [DONE] timed out")

// contextClass tells why ctx ended: the request's own timeout or the caller.
func contextClass(ctx context.Context) ErrorClass {
	if errors.Is(context.Cause(ctx), errRequestTimeout) {
		return ErrTimeout
	}
	if errors.Is(context.Cause(ctx), errStalled) {
		return ErrStalled
	}
	return ErrCanceled
}
