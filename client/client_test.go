package client

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	ok := Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}
	tests := []struct {
		name string
		edit func(*Config)
		want string // a piece of the error
	}{
		{"no scheme", func(c *Config) { c.BaseURL = "127.0.0.1:8000/v1" }, "base URL"},
		{"not http", func(c *Config) { c.BaseURL = "ftp://host/v1" }, "base URL"},
		{"unparseable", func(c *Config) { c.BaseURL = "http://[::1" }, "base URL"},
		{"unknown dialect", func(c *Config) { c.Dialect = "nonesuch" }, "unknown dialect"},
		{"no model", func(c *Config) { c.Model = "" }, "model"},
		{"negative timeout", func(c *Config) { c.Timeout = -1 }, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := ok
			tt.edit(&cfg)
			_, err := New(cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v, want an error about %q", err, tt.want)
			}
		})
	}
	if _, err := New(ok); err != nil {
		t.Fatalf("New(valid) = %v", err)
	}
}

func TestWarmReportsUnreachableServer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	c := newTestClient(t, "http://"+addr, nil)

	err = c.Warm(t.Context(), 3)

	if err == nil || !strings.Contains(err.Error(), addr+"/v1/models") {
		t.Fatalf("Warm = %v, want an error naming %s/v1/models", err, addr)
	}
	we, ok := errors.AsType[*WarmError](err)
	if !ok || we.Accepted || we.Opened != 0 || we.Want != 3 || we.First == nil {
		t.Fatalf("Warm = %#v: want a WarmError saying nothing was accepted (every dial refused)", err)
	}
}

// An engine that breaks some connections as they open (it restarts, or
// drops them) is told from one where nothing listens: Warm says how many
// opened and that the engine accepted the others before breaking them.
func TestWarmCountsBrokenConnections(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.(*net.TCPConn).SetLinger(0) // a reset, as a dying process's
				_ = conn.Close()
			}
			return
		}
		fmt.Fprint(w, `{"object":"list","data":[]}`)
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL, nil)
	err := c.Warm(t.Context(), 4)
	we, ok := errors.AsType[*WarmError](err)
	if !ok || !we.Accepted || we.Opened != 2 || we.Want != 4 || we.First == nil {
		t.Fatalf("Warm = %v (%#v): want 2 of 4 opened, the others broken after the engine accepted them", err, we)
	}
}

func TestDoAcceptsStreamShapes(t *testing.T) {
	t.Parallel()
	crlf := func(events []string) []string {
		out := make([]string, len(events))
		for i, e := range events {
			out[i] = strings.ReplaceAll(e, "\n", "\r\n")
		}
		return out
	}
	tests := []struct {
		name   string
		events []string
		chunks int
	}{
		{
			name: "SSE comments and event lines between chunks",
			events: []string{": ping\n\n", "data:\n\n", roleEvent("s"), "event: message\n" + contentEvent("s", "a"), ": keep-alive\n\n", "data: \r\n\r\n",
				contentEvent("s", "b"), finishEvent("s", "stop"), doneEvent},
			chunks: 2,
		},
		{name: "CRLF line endings", events: crlf(fullStream("s", 3)), chunks: 3},
		{
			name:   "data: without a space and [DONE] with trailing blanks",
			events: []string{strings.Replace(contentEvent("s", "a"), "data: ", "data:", 1), finishEvent("s", "stop"), "data:[DONE]  \n\n"},
			chunks: 1,
		},
		{
			name: "reasoning text counts as generated content",
			events: []string{
				`data: {"id":"s","choices":[{"delta":{"reasoning_content":"hmm"}}]}` + "\n\n",
				`data: {"id":"s","choices":[{"delta":{"reasoning":"so"}}]}` + "\n\n",
				contentEvent("s", "yes"), finishEvent("s", "stop"), doneEvent,
			},
			chunks: 3,
		},
		{
			name:   "one event split over many writes",
			events: splitEvery(strings.Join(fullStream("s", 2), ""), 7),
			chunks: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, streamOf(tt.events...))
			c := newTestClient(t, srv.URL, nil)

			rec := c.Do(t.Context(), request("r"))

			wantClass(t, rec, ErrNone)
			checkTimeline(t, rec)
			if len(rec.Chunks) != tt.chunks || rec.ServerID != "s" || rec.Status != http.StatusOK {
				t.Errorf("%d chunks, server id %q, status %d; want %d, s, 200", len(rec.Chunks), rec.ServerID, rec.Status, tt.chunks)
			}
		})
	}
}

// splitEvery cuts s into pieces of n bytes, each written and flushed apart.
func splitEvery(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// TestNothingListened: only a dial that failed otherwise than by a reset
// says no engine took the connection. A dial reset is a connection the
// engine's listening socket took and dropped unaccepted as it closed to
// restart (the error, as .ci/busy-test met it on every dial of a warm-up).
func TestNothingListened(t *testing.T) {
	t.Parallel()
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 36745}
	dial := func(errno syscall.Errno) error {
		return &url.Error{Op: "Get", URL: "http://127.0.0.1:36745/v1/models",
			Err: &net.OpError{Op: "dial", Net: "tcp", Addr: addr, Err: os.NewSyscallError("connect", errno)}}
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"refused", dial(syscall.ECONNREFUSED), true},
		{"no route", dial(syscall.EHOSTUNREACH), true},
		{"reset while dialing: a listener closed with the connection in its queue", dial(syscall.ECONNRESET), false},
		{"reset after the dial", &url.Error{Op: "Get", URL: "http://x/v1/models",
			Err: &net.OpError{Op: "read", Net: "tcp", Addr: addr, Err: os.NewSyscallError("read", syscall.ECONNRESET)}}, false},
		{"EOF", &url.Error{Op: "Get", URL: "http://x/v1/models", Err: io.EOF}, false},
	} {
		if got := nothingListened(tc.err); got != tc.want {
			t.Errorf("%s: nothingListened(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
	if got := dial(syscall.ECONNRESET).Error(); !strings.Contains(got, "connect: connection reset by peer") {
		t.Errorf("the reset dial reads %q, not as the busy machine printed it", got)
	}
}
