package llamacpp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// roundTrip writes one chat request on conn and reads its response whole.
func roundTrip(t *testing.T, tg target, conn net.Conn, r *bufio.Reader, streamed bool) *http.Response {
	t.Helper()
	return roundTripOf(t, tg, conn, r, streamed, "hello there")
}

func roundTripOf(t *testing.T, tg target, conn net.Conn, r *bufio.Reader, streamed bool, content string) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": tg.model, "stream": streamed, "max_tokens": 4, "logit_bias": noBytes(),
		"messages": []map[string]any{{"role": "user", "content": content}}})
	host := strings.TrimPrefix(tg.root, "http://")
	req := fmt.Sprintf("POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", host, len(body), body)
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatalf("%s: write: %v", tg.name, err)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("%s: read response (stream %v): %v", tg.name, streamed, err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatalf("%s: read body: %v", tg.name, err)
	}
	resp.Body.Close()
	return resp
}

// closed reports whether the server closed conn within a few seconds: the
// next read meets the end (or a reset), not a timeout.
func closed(r *bufio.Reader, conn net.Conn) (bool, error) {
	_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err := r.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout()), err
}

// TestConnections: every successful response says Keep-Alive: timeout=5,
// max=100 and none says Connection: close, yet the server closes the
// connection right after a streamed response; after a whole answer it keeps
// it, and a second request on it is answered. An error answer says
// Connection: close (no Keep-Alive), so the client closes it (the real
// server leaves the socket open; the built-in engine closes it: decision
// 2200).
func TestConnections(t *testing.T) {
	for _, tg := range both(t) {
		dial := func() (net.Conn, *bufio.Reader) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(tg.root, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			return conn, bufio.NewReader(conn)
		}
		conn, r := dial()
		for i := range 2 {
			resp := roundTrip(t, tg, conn, r, false)
			if resp.StatusCode != 200 || resp.Header.Get("Keep-Alive") != "timeout=5, max=100" || resp.Close {
				t.Errorf("%s: whole answer %d on one connection: %d, Keep-Alive %q, close %v", tg.name, i+1, resp.StatusCode, resp.Header.Get("Keep-Alive"), resp.Close)
			}
		}
		conn, r = dial()
		resp := roundTrip(t, tg, conn, r, true)
		if resp.StatusCode != 200 || resp.Header.Get("Keep-Alive") != "timeout=5, max=100" || resp.Close {
			t.Errorf("%s: stream: %d, Keep-Alive %q, Connection: close said %v", tg.name, resp.StatusCode, resp.Header.Get("Keep-Alive"), resp.Close)
		}
		if ok, err := closed(r, conn); !ok {
			t.Errorf("%s: after a streamed response the connection stayed open (read: %v)", tg.name, err)
		}
		conn, r = dial()
		resp = roundTripOf(t, tg, conn, r, false, words(slotCtx+50))
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Keep-Alive") != "" || !resp.Close {
			t.Errorf("%s: an error answer: %d, Keep-Alive %q, Connection: close said %v", tg.name, resp.StatusCode, resp.Header.Get("Keep-Alive"), resp.Close)
		}
		ok, err := closed(r, conn)
		t.Logf("%s: after an error answer the server closed the socket: %v (read: %v)", tg.name, ok, err)
	}
}
