package client

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

// Streams framed as the spec allows and real servers, gateways and proxies
// send them (decisions 0209–0211), each over loopback, each read as the same
// stream: 3 content chunks, finish_reason length, usage 11/3.

// framed applies f to every event of a good stream of 3 chunks.
func framed(f func(i int, ev string) string) []string {
	evs := fullStream("s", 3)
	for i, ev := range evs {
		evs[i] = f(i, ev)
	}
	return evs
}

// multiLine spreads each JSON payload over several data lines, split
// between members (JSON allows the "\n" the lines are joined with there).
func multiLine(_ int, ev string) string {
	return strings.ReplaceAll(ev, `,"`, ",\ndata:\"")
}

// byteWriter writes every byte of every event in a write of its own, each
// flushed: every line end, and a CR and its LF, fall across reads.
func byteWriter(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range events {
			for i := range len(ev) {
				_, _ = io.WriteString(w, ev[i:i+1])
				w.(http.Flusher).Flush()
			}
		}
	}
}

func TestDoReadsEveryFraming(t *testing.T) {
	t.Parallel()
	crlf := func(_ int, ev string) string { return strings.ReplaceAll(ev, "\n", "\r\n") }
	cr := func(_ int, ev string) string { return strings.ReplaceAll(ev, "\n", "\r") }
	tests := []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"CRLF", streamOf(framed(crlf)...)},
		{"CR", streamOf(framed(cr)...)},
		{"mixed line ends", streamOf(framed(func(i int, ev string) string {
			return [](func(int, string) string){crlf, cr, func(_ int, ev string) string { return ev }}[i%3](i, ev)
		})...)},
		{"a BOM", streamOf(framed(func(i int, ev string) string {
			if i == 0 {
				return "\xef\xbb\xbf" + ev
			}
			return ev
		})...)},
		{"JSON over several data lines", streamOf(framed(multiLine)...)},
		{"no space after the colon", streamOf(framed(func(_ int, ev string) string { return strings.Replace(ev, "data: ", "data:", 1) })...)},
		{"event, id and retry fields, comments, unknown fields, extra blank lines", streamOf(framed(func(i int, ev string) string {
			return fmt.Sprintf(": comment %d\n\nevent: message\nid: %d\nretry: 1000\nfoo: bar\nid\n%s\n", i, i, ev)
		})...)},
		{"events of another type, ignored", streamOf(framed(func(_ int, ev string) string {
			return "event: ping\ndata: not json\n\n" + ev
		})...)},
		{"every byte a read of its own, CRLF", byteWriter(framed(crlf)...)},
		{"every byte a read of its own, CR, multi-line", byteWriter(framed(func(i int, ev string) string { return cr(i, multiLine(i, ev)) })...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tt.handler)
			c := newTestClient(t, srv.URL, nil)

			rec := c.Do(t.Context(), request("r"))

			wantClass(t, rec, ErrNone)
			checkTimeline(t, rec)
			if len(rec.Chunks) != 3 || rec.OutputTokens != 3 || rec.PromptTokens != 11 || rec.TokenSource != TokensFromUsage ||
				rec.FinishReason != "length" || rec.NoDone || rec.Wire != "" || rec.ServerID != "s" {
				t.Errorf("%d chunks, %d/%d tokens from %q, finish %q, NoDone %v, wire %q, server id %q; want 3, 11/3 from usage, length, false, none, s",
					len(rec.Chunks), rec.PromptTokens, rec.OutputTokens, rec.TokenSource, rec.FinishReason, rec.NoDone, rec.Wire, rec.ServerID)
			}
		})
	}
}

func TestDoEventTypes(t *testing.T) {
	t.Parallel()
	good := fullStream("s", 2)
	tests := []struct {
		name   string
		events []string
		class  ErrorClass
		errHas string
		chunks int
	}{
		{"event: error with an OpenAI error", append(good[:2:2], "event: error\ndata: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n"),
			ErrStreamBroken, "error event after 1 output chunks: overloaded (type server_error)", 1},
		{"event: error with plain text", append(good[:3:3], "event: error\ndata: upstream timed out\n\n"),
			ErrStreamBroken, "upstream timed out", 2},
		{"event: error over two data lines, CRLF", append(good[:1:1], "event: error\r\ndata: {\"message\":\r\ndata: \"bad gateway\"}\r\n\r\n"),
			ErrStreamBroken, "bad gateway", 0},
		{"event: error at the end of the body without its blank line", append(good[:2:2], "event: error\ndata: {\"detail\":\"cut\"}"),
			ErrStreamBroken, "cut", 1},
		{"only events of another type", []string{"event: completion\ndata: " + strings.TrimPrefix(good[1], "data: ")},
			ErrStreamBroken, `1 events of type "completion" ignored`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, streamOf(tt.events...))
			c := newTestClient(t, srv.URL, nil)

			rec := c.Do(t.Context(), request("r"))

			wantClass(t, rec, tt.class)
			checkTimeline(t, rec)
			if !strings.Contains(rec.Error, tt.errHas) || len(rec.Chunks) != tt.chunks {
				t.Errorf("error %q with %d chunks; want it to hold %q, %d chunks", rec.Error, len(rec.Chunks), tt.errHas, tt.chunks)
			}
		})
	}
}

// flushWriter is a compressor with Flush (gzip, zlib, flate and brotli all have one).
type flushWriter interface {
	io.WriteCloser
	Flush() error
}

// compressors are the codings a proxy may apply, by the name the header gives.
var compressors = []struct {
	name, header string
	new          func(io.Writer) flushWriter
}{
	{"gzip", "gzip", func(w io.Writer) flushWriter { return gzip.NewWriter(w) }},
	{"deflate", "deflate", func(w io.Writer) flushWriter { return zlib.NewWriter(w) }},
	{"deflate-raw", "deflate", func(w io.Writer) flushWriter { z, _ := flate.NewWriter(w, flate.DefaultCompression); return z }},
	{"br", "br", func(w io.Writer) flushWriter { return brotli.NewWriter(w) }},
}

// compressed answers with events compressed as a proxy would: each event
// flushed through the compressor and the connection; then, unless linger,
// the compressed stream's end.
func compressed(header string, newW func(io.Writer) flushWriter, linger bool, events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if got := r.Header.Get("Accept-Encoding"); got != "identity" {
			http.Error(w, "Accept-Encoding "+got, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", header)
		z := newW(w)
		for _, ev := range events {
			_, _ = io.WriteString(z, ev)
			_ = z.Flush()
			w.(http.Flusher).Flush()
		}
		if linger {
			stall(r)
			return
		}
		_ = z.Close()
	}
}

func TestDoContentCodings(t *testing.T) {
	t.Parallel()
	for _, cz := range compressors {
		t.Run(cz.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, compressed(cz.header, cz.new, false, fullStream("s", 3)...))
			c := newTestClient(t, srv.URL, nil)

			first, second := c.Do(t.Context(), request("r1")), c.Do(t.Context(), request("r2"))

			for _, rec := range []Record{first, second} {
				wantClass(t, rec, ErrNone)
				checkTimeline(t, rec)
				if len(rec.Chunks) != 3 || rec.OutputTokens != 3 || rec.Wire != cz.name {
					t.Errorf("%d chunks, %d tokens, wire %q; want 3, 3, %q", len(rec.Chunks), rec.OutputTokens, rec.Wire, cz.name)
				}
			}
			// The body was read to its end: the connection went back to the pool.
			if !second.Reused {
				t.Error("the second request did not reuse the connection: the compressed body was not read to its end")
			}
		})
	}
	t.Run("gzip over deflate", func(t *testing.T) {
		t.Parallel()
		srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Encoding", "deflate, gzip")
			g := gzip.NewWriter(w)
			z := zlib.NewWriter(g)
			_, _ = io.WriteString(z, strings.Join(fullStream("s", 2), ""))
			_ = z.Close()
			_ = g.Close()
		}))
		rec := newTestClient(t, srv.URL, nil).Do(t.Context(), request("r"))
		wantClass(t, rec, ErrNone)
		if len(rec.Chunks) != 2 || rec.Wire != "deflate+gzip" {
			t.Errorf("%d chunks, wire %q; want 2, deflate+gzip", len(rec.Chunks), rec.Wire)
		}
	})
}

func TestDoContentCodingFailures(t *testing.T) {
	t.Parallel()
	gz := func(s string) []byte {
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		_, _ = io.WriteString(z, s)
		_ = z.Close()
		return b.Bytes()
	}
	answer := func(status int, coding, ctype string, body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", ctype)
			if coding != "" {
				w.Header().Set("Content-Encoding", coding)
			}
			w.WriteHeader(status)
			_, _ = w.Write(body)
		}
	}
	stream := []byte(strings.Join(fullStream("s", 2), ""))
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		noStream bool
		class    ErrorClass
		errHas   string
	}{
		{"an unknown coding", answer(200, "zstd", "text/event-stream", stream), false, ErrContentEncoding, `content coding "zstd"`},
		{"too many layers", answer(200, "gzip, gzip, gzip, gzip", "text/event-stream", stream), false, ErrContentEncoding, "more than 3 layers"},
		{"gzip without Content-Encoding", answer(200, "", "text/event-stream", gz(string(stream))), false, ErrContentEncoding, "no Content-Encoding"},
		{"gzip without Content-Encoding, not streamed", answer(200, "", "application/json", gz(`{"choices":[]}`)), true, ErrContentEncoding, "no Content-Encoding"},
		{"a gzip error body", answer(503, "gzip", "application/json", gz(`{"error":{"message":"queue full"}}`)), false, ErrHTTPStatus, "queue full"},
		{"an error body in an unknown coding", answer(503, "compress", "application/json", []byte("\x1f\x9d...")), false, ErrHTTPStatus, `content coding "compress"`},
		{"a corrupt gzip stream", answer(200, "gzip", "text/event-stream", append(gz(string(stream))[:20:20], "garbage"...)), false, ErrStreamBroken, "after 0 output chunks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tt.handler)
			c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.NoStream = tt.noStream })

			rec := c.Do(t.Context(), request("r"))

			wantClass(t, rec, tt.class)
			if !strings.Contains(rec.Error, tt.errHas) {
				t.Errorf("error %q; want it to hold %q", rec.Error, tt.errHas)
			}
		})
	}
}

// Each decoder hands out an event as soon as the flush that carries it is
// read, without waiting for more of the body: the time an event is taken
// is when it arrived. The writer holds the next event until the reader has
// the one before (a liveness check: a decoder that waits hangs here, and
// the guard fails it).
func TestDecodersHandOutEachFlush(t *testing.T) {
	t.Parallel()
	for _, cz := range compressors {
		t.Run(cz.name, func(t *testing.T) {
			t.Parallel()
			pr, pw := io.Pipe()
			body, decs, err := decodeBody(http.Header{"Content-Encoding": {cz.header}}, pr)
			if err != nil {
				t.Fatal(err)
			}
			events := fullStream("s", 3)
			got := make(chan struct{})
			go func() {
				z := cz.new(pw)
				for _, ev := range events {
					_, _ = io.WriteString(z, ev)
					_ = z.Flush()
					select {
					case <-got:
					case <-time.After(20 * time.Second):
					}
				}
				_ = z.Close()
				_ = pw.Close()
			}()
			sr := newSSEReader(body)
			for i := range events {
				done := make(chan error, 1)
				go func() {
					_, err := sr.next()
					done <- err
				}()
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("event %d: %v", i, err)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("event %d was not handed out before the next was written", i)
				}
				got <- struct{}{}
			}
			if _, err := sr.next(); err != io.EOF {
				t.Errorf("after the stream: %v, want EOF", err)
			}
			if n := codingNote(decs); n != cz.name {
				t.Errorf("note %q, want %q", n, cz.name)
			}
		})
	}
}

// A complete stream whose connection stays open is a success ending at its
// last event, marked "linger", and Do returns after the grace, not when the
// server closes (never, here) or the request times out. The inequalities
// are exact: the grace's timer is started after End was taken.
func TestDoLinger(t *testing.T) {
	t.Parallel()
	lingering := func(events ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			writeEvents(w, events...)
			stall(r)
		}
	}
	full := fullStream("s", 2)
	noDone := full[:len(full)-1]
	tests := []struct {
		name    string
		handler http.HandlerFunc
		noDone  bool
		wire    string
		grace   time.Duration
	}{
		{"after [DONE]", lingering(full...), false, "linger", drainGrace},
		{"without [DONE], after finish and usage", lingering(noDone...), true, "linger", lingerGrace},
		{"without [DONE], after the finish chunk of a server that sends no usage", lingering(noDone[:len(noDone)-1]...), true, "linger", lingerGrace},
		{"gzip, after [DONE]", compressed("gzip", compressors[0].new, true, full...), false, "gzip linger", drainGrace},
		{"gzip ended, then the connection", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			z := gzip.NewWriter(w)
			_, _ = io.WriteString(z, strings.Join(full, ""))
			_ = z.Close()
			w.(http.Flusher).Flush()
			stall(r)
		}), false, "gzip linger", drainGrace},
		{"two gzip members, then the connection", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			for _, part := range []string{strings.Join(full[:2], ""), strings.Join(full[2:], "")} {
				z := gzip.NewWriter(w)
				_, _ = io.WriteString(z, part)
				_ = z.Close()
			}
			w.(http.Flusher).Flush()
			stall(r)
		}), false, "gzip linger", drainGrace},
		{"without [DONE], closed at once: no linger", streamOf(noDone...), true, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, tt.handler)
			c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Timeout = time.Minute })

			rec := c.Do(t.Context(), request("r"))
			returned := c.since()

			wantClass(t, rec, ErrNone)
			checkTimeline(t, rec)
			if rec.NoDone != tt.noDone || rec.Wire != tt.wire || len(rec.Chunks) != 2 {
				t.Errorf("NoDone %v, wire %q, %d chunks; want %v, %q, 2", rec.NoDone, rec.Wire, len(rec.Chunks), tt.noDone, tt.wire)
			}
			if rec.End+tt.grace > returned {
				t.Errorf("End %v is less than the grace %v before Do returned (%v): it counts the linger", rec.End, tt.grace, returned)
			}
		})
	}
}
