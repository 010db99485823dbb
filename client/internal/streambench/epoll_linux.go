package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"syscall"
	"time"
)

// epollLoop reads without Go's netpoller, as an own transport would: one
// goroutine per P waits in its own level-triggered epoll set and reads each
// ready connection once, so a chunk costs one read(2) and a share of one
// epoll_wait, and no goroutine is parked or woken per chunk (but each
// blocking epoll_wait hands the P to another thread). Requests are written
// by hand; data lines are counted and timestamped after the read that
// completed them, as in raw. Measured against raw in client/BENCHMARKS.md:
// no floor on a quiet machine.
func epollLoop(ctx context.Context, base string, o options, w *window, counts []tally) (failed, requests int64, err error) {
	u, err := url.Parse(base)
	if err != nil {
		return 0, 0, err
	}
	body := requestBody(o.maxTokens)
	req := []byte(fmt.Sprintf("POST %s/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", u.Path, u.Host, len(body), body))
	type conn struct {
		nc   net.Conn
		fd   int
		i    int
		line []byte
		prev time.Duration
		done bool // [DONE] seen: waiting for the chunked terminator
		zero bool // the terminator's "0" line seen
	}
	pollers := runtime.GOMAXPROCS(0)
	epfds := make([]int, pollers)
	for p := range epfds {
		if epfds[p], err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC); err != nil {
			return 0, 0, err
		}
	}
	conns := make([]*conn, o.streams)
	for i := range conns {
		nc, err := net.Dial("tcp", u.Host)
		if err != nil {
			return 0, 0, err
		}
		rc, _ := nc.(*net.TCPConn).SyscallConn()
		c := &conn{nc: nc, i: i, line: make([]byte, 0, 1024)}
		_ = rc.Control(func(fd uintptr) { c.fd = int(fd) })
		conns[i] = c
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(i)}
		if err := syscall.EpollCtl(epfds[i%pollers], syscall.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
			return 0, 0, err
		}
		if _, err := nc.Write(req); err != nil {
			return 0, 0, err
		}
	}
	results := make(chan [2]int64, pollers)
	for p := range pollers {
		go func() {
			var f, r int64
			defer func() { results <- [2]int64{f, r} }()
			events := make([]syscall.EpollEvent, 256)
			buf := make([]byte, 4096)
			for ctx.Err() == nil {
				n, err := syscall.EpollWait(epfds[p], events, 100)
				if err != nil {
					if err == syscall.EINTR {
						continue
					}
					f++
					return
				}
				for _, ev := range events[:n] {
					c := conns[ev.Fd]
					m, err := syscall.Read(c.fd, buf)
					at := time.Since(w.start)
					if err == syscall.EAGAIN {
						continue
					}
					if err != nil || m == 0 {
						f++
						_ = syscall.EpollCtl(epfds[p], syscall.EPOLL_CTL_DEL, c.fd, nil)
						continue
					}
					data := buf[:m]
					for len(data) > 0 {
						nl := bytes.IndexByte(data, '\n')
						if nl < 0 {
							c.line = append(c.line, data...)
							break
						}
						line := data[:nl+1]
						if len(c.line) > 0 {
							c.line = append(c.line, line...)
							line = c.line
						}
						data = data[nl+1:]
						switch {
						case c.zero && string(line) == "\r\n":
							c.done, c.zero = false, false
							r++
							if ctx.Err() == nil {
								if _, err := c.nc.Write(req); err != nil {
									f++
								}
							}
						case c.done && string(line) == "0\r\n":
							c.zero = true
						case bytes.HasPrefix(line, dataPrefix):
							if i := bytes.Index(line, contentMark); i >= 0 && len(line) > i+len(contentMark) && line[i+len(contentMark)] != '"' {
								w.count(&counts[c.i], c.prev, at)
								c.prev = at
							}
						case bytes.HasPrefix(line, []byte("data: [DONE]")):
							c.done = true
						}
						c.line = c.line[:0]
					}
				}
			}
		}()
	}
	<-ctx.Done()
	for range pollers {
		res := <-results
		failed += res[0]
		requests += res[1]
	}
	for _, c := range conns {
		_ = c.nc.Close()
	}
	for _, fd := range epfds {
		_ = syscall.Close(fd)
	}
	return failed, requests, nil
}
