package sim

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// pipeListener is an in-memory listener: real HTTP over net.Pipe, so the
// engine runs inside a synctest bubble on a fake clock.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, errors.New("listener closed")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestLoopTimingOnFakeClock: on a fake clock the truth shows exactly the
// modeled pass durations — the loop sleeps what the model says, no more.
func TestLoopTimingOnFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := Preset("tiny")
		e, err := New(Config{Params: p})
		if err != nil {
			t.Fatal(err)
		}
		ln := newPipeListener()
		srv := &http.Server{Handler: e.Handler()}
		go srv.Serve(ln)
		client := &http.Client{Transport: &http.Transport{DialContext: ln.dial}}

		body := `{"messages":[{"role":"user","content":"` + words("w", 10) + `"}],"stream":true,"max_tokens":5,"rid":"fake-1"}`
		resp, err := client.Post("http://sim/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
		}
		resp.Body.Close()

		truth := e.Truth()
		if len(truth) != 1 {
			t.Fatalf("%d truth records", len(truth))
		}
		tr := truth[0]
		prefill := p.DecodeBase + p.PrefillOverhead + 10*p.PrefillPerToken // 10-token prompt, nothing decoding
		decode := p.DecodeBase + p.DecodePerSeq
		if got := tr.PrefillEnd - tr.PrefillStart; got != prefill {
			t.Errorf("prefill pass took %v on the fake clock, model says %v", got, prefill)
		}
		for i := 1; i < len(tr.TokenFlushes); i++ {
			if got := tr.TokenFlushes[i] - tr.TokenFlushes[i-1]; got != decode {
				t.Errorf("token %d came %v after the previous, model says %v", i, got, decode)
			}
		}
		if got, want := tr.Finish-tr.Arrival, prefill+4*decode; got != want {
			t.Errorf("request took %v, model says %v", got, want)
		}

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		ln.Close()
		client.CloseIdleConnections()
		if err := e.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
