package client

import (
	"bytes"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
)

// The reference for sseReader: the WHATWG event-stream interpretation
// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation)
// written out step by step over the whole body at once, with strings, as
// the spec states it. Only the UTF-8 decoding is left out (bytes are
// compared): it drops the leading BOM, done here, and replaces invalid
// sequences, which never hold a CR, LF or colon, so lines and fields split
// the same either way.

// refEvent is one thing the reader hands out: a dispatched event, or (an
// llmbench addition) a bare line starting with '{'.
type refEvent struct {
	Bare bool
	Type string // the event type buffer; "" means "message"
	Data string
	ID   string // the last event ID string when it was dispatched
}

// refResult is what the reference says of a whole body.
type refResult struct {
	events []refEvent
	// tail is llmbench's addition at the end of the body: the event being
	// assembled once the last piece (which had no line end, so the spec
	// does not read it) is read as a line, or that piece when it is bare.
	tail  *refEvent
	retry int64 // the reconnection time set last; -1 for none
}

func refSSE(stream []byte) refResult {
	s := string(stream)
	s = strings.TrimPrefix(s, "\ufeff") // UTF-8 decode drops one leading BOM

	// "Lines must be separated by either a U+000D CARRIAGE RETURN U+000A
	// LINE FEED (CRLF) character pair, a single U+000A LINE FEED (LF)
	// character, or a single U+000D CARRIAGE RETURN (CR) character."
	var lines []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\r':
			lines = append(lines, s[start:i])
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			start = i + 1
		case '\n':
			lines = append(lines, s[start:i])
			start = i + 1
		}
	}
	last := s[start:]

	res := refResult{retry: -1}
	var eventType, lastEventID string
	var data strings.Builder // the data buffer
	process := func(line string) (ev refEvent, dispatched bool) {
		var field, value string
		switch {
		case line == "":
			// Dispatch the event.
			if data.Len() == 0 {
				data.Reset()
				eventType = ""
				return ev, false
			}
			ev = refEvent{Type: eventType, Data: strings.TrimSuffix(data.String(), "\n"), ID: lastEventID}
			data.Reset()
			eventType = ""
			return ev, true
		case line[0] == ':':
			return ev, false
		case strings.Contains(line, ":"):
			field, value, _ = strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
		default:
			field, value = line, ""
		}
		switch field {
		case "event":
			eventType = value
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
		case "id":
			if !strings.Contains(value, "\x00") {
				lastEventID = value
			}
		case "retry":
			if value != "" && strings.Trim(value, "0123456789") == "" {
				res.retry = refAtoi(value)
			}
		}
		return ev, false
	}
	bare := func(line string) bool { return len(line) > 0 && line[0] == '{' }
	for _, line := range lines {
		if bare(line) {
			res.events = append(res.events, refEvent{Bare: true, Data: line})
			continue
		}
		if ev, ok := process(line); ok {
			res.events = append(res.events, ev)
		}
	}
	// "Once the end of the file is reached, any pending data must be
	// discarded": the spec ends here. llmbench's tail:
	if last != "" {
		process(last)
	}
	switch {
	case data.Len() > 0:
		res.tail = &refEvent{Type: eventType, Data: strings.TrimSuffix(data.String(), "\n"), ID: lastEventID}
	case bare(last):
		res.tail = &refEvent{Bare: true, Data: last}
	}
	return res
}

// refAtoi is base ten, saturating.
func refAtoi(v string) int64 {
	var n int64
	for _, c := range v {
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			n = math.MaxInt64
		} else {
			n = n*10 + d
		}
	}
	return n
}

// sseSeeds are stream shapes real servers, gateways and proxies send, and
// the corners of the algorithm.
var sseSeeds = []string{
	// vLLM and SGLang: one data line per event, LF, [DONE].
	"data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}]}\n\ndata: [DONE]\n\n",
	// TGI and some gateways: no space after the colon.
	"data:{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata:[DONE]\n\n",
	// CRLF (ASP.NET, Azure front ends), a lone CR (old Mac-style writers), mixed.
	"data: {\"x\":1}\r\n\r\ndata: [DONE]\r\n\r\n",
	"data: {\"x\":1}\r\rdata: [DONE]\r\r",
	"data: {\"x\":1}\r\n\ndata: {\"x\":2}\n\r\ndata: [DONE]\r\r",
	// A BOM (some .NET and Java writers), only once.
	"\xef\xbb\xbfdata: {\"x\":1}\n\n",
	"\xef\xbb\xbf\xef\xbb\xbfdata: {\"x\":1}\n\n",
	// JSON over several data lines.
	"data: {\"choices\":\ndata: [{\"delta\":\ndata:{\"content\":\"a\"}}]}\n\n",
	// OpenRouter's and llama.cpp's comments, keep-alives.
	": OPENROUTER PROCESSING\n\n: ping\n\ndata: {\"x\":1}\n\n",
	"data:\n\ndata\n\n",
	// event, id and retry fields (gateways, LiteLLM proxies, Anthropic-style streams).
	"event: message\nid: 7\nretry: 3000\ndata: {\"x\":1}\n\n",
	"event: error\ndata: {\"error\":{\"message\":\"overloaded\"}}\n\n",
	"event: ping\ndata: {}\n\nevent:\ndata: {\"x\":1}\n\n",
	"id: a\x00b\ndata: x\n\nid\ndata: y\n\n",
	"retry: 12a\nretry: 99999999999999999999999\nretry\ndata: x\n\n",
	// The spec's own examples.
	"data: YHOO\ndata: +2\ndata: 10\n\n",
	": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n",
	"data\n\ndata\ndata\n\ndata:",
	"data:test\n\ndata: test\n\n",
	// Ends without the blank line; a cut line; a JSON body, not a stream.
	"data: [DONE]",
	"data: [DONE]\n",
	"data: {\"x\":1}\n\ndata: {\"cut",
	"{\"error\":\"not SSE\"}",
	"{\"error\":\"not SSE\"}\n",
	"data: x\r",
	// A line longer than any buffer.
	"data: {\"choices\":[{\"delta\":{\"content\":\"a very long line, longer than the sixteen-byte buffer, and longer again\"}}]}\n\n",
	// Unknown fields, a colon in the value, a field name with spaces.
	"foo: bar\n data: x\ndata: a:b: c\n\n",
	"\x1f\x8b\x08\x00",
}

// cutReader hands out data in pieces whose sizes are cuts' bytes (0 is 1),
// then the rest in one; eofWithData returns io.EOF with the last piece.
type cutReader struct {
	data        []byte
	cuts        []byte
	eofWithData bool
}

func (r *cutReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := len(r.data)
	if len(r.cuts) > 0 {
		n = max(1, min(n, int(r.cuts[0])))
		r.cuts = r.cuts[1:]
	}
	n = copy(p, r.data[:n])
	r.data = r.data[n:]
	if r.eofWithData && len(r.data) == 0 {
		return n, io.EOF
	}
	return n, nil
}

func toRef(ev sseEvent) refEvent {
	return refEvent{Bare: ev.bare, Type: string(ev.typ), Data: string(ev.data), ID: string(ev.id)}
}

// readAll runs an sseReader with a buffer of size over the pieces.
func readAll(data, cuts []byte, size int, eofWithData bool) (got []refEvent, sr *sseReader, err error) {
	sr = newSSEReaderSize(&cutReader{data: data, cuts: cuts, eofWithData: eofWithData}, size)
	for {
		ev, err := sr.next()
		if err != nil {
			return got, sr, err
		}
		got = append(got, toRef(ev))
	}
}

func FuzzSSEReference(f *testing.F) {
	for i, s := range sseSeeds {
		f.Add([]byte(s), []byte{byte(i), 3, 7, 1, 1, 2}, uint8(i))
		f.Add([]byte(s), []byte{}, uint8(200))
	}
	f.Fuzz(func(t *testing.T, data, cuts []byte, opt uint8) {
		// Reads in pieces, and buffers of 4 to 67 bytes, so that lines and
		// line ends (a CR, then its LF) span reads and overflow the buffer.
		size := 4 + int(opt&63)
		got, sr, err := readAll(data, cuts, size, opt&64 != 0)
		if bytes.HasPrefix(data, gzipMagic) {
			if !errors.Is(err, errUnlabelledGzip) {
				t.Fatalf("gzip magic read as SSE: %v", err)
			}
			return
		}
		if err != io.EOF {
			t.Fatalf("next: %v, for %q", err, data)
		}
		want := refSSE(data)
		if !slices.Equal(got, want.events) {
			t.Fatalf("events\n%+v\nthe reference says\n%+v\nfor %q", got, want.events, data)
		}
		var tail *refEvent
		if sr.hasTail {
			ev := toRef(sr.tail)
			tail = &ev
		}
		if (tail == nil) != (want.tail == nil) || tail != nil && *tail != *want.tail {
			t.Fatalf("tail %+v, the reference says %+v, for %q", tail, want.tail, data)
		}
		if sr.retry != want.retry {
			t.Fatalf("retry %d, the reference says %d, for %q", sr.retry, want.retry, data)
		}
	})
}

// TestSSEReaderSpecExamples holds the reader (and the reference) to the
// spec's worked examples and the framings real servers send, independently
// of each other.
func TestSSEReaderSpecExamples(t *testing.T) {
	t.Parallel()
	msg := func(data string) refEvent { return refEvent{Data: data} }
	tests := []struct {
		name   string
		stream string
		want   []refEvent
	}{
		{"three data lines joined by LF", "data: YHOO\ndata: +2\ndata: 10\n\n", []refEvent{msg("YHOO\n+2\n10")}},
		{"ids persist, an id alone resets it, the last event is dropped at EOF",
			": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n",
			[]refEvent{{Data: "first event", ID: "1"}, {Data: "second event"}}},
		{"data alone is an empty line of data", "data\n\ndata\ndata\n\ndata:", []refEvent{msg(""), msg("\n")}},
		{"one space after the colon is dropped, no more", "data:test\n\ndata: test\n\ndata:  test\n\n",
			[]refEvent{msg("test"), msg("test"), msg(" test")}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []refEvent{msg("a"), msg("b")}},
		{"lone CR", "data: a\r\rdata: b\r\r", []refEvent{msg("a"), msg("b")}},
		{"CR then LF is one line end, LF then CR two", "data: a\r\n\ndata: b\n\r", []refEvent{msg("a"), msg("b")}},
		{"one BOM dropped", "\xef\xbb\xbfdata: a\n\n", []refEvent{msg("a")}},
		{"a second BOM is part of a field name", "\xef\xbb\xbf\xef\xbb\xbfdata: a\n\ndata: b\n\n", []refEvent{msg("b")}},
		{"event type, reset after dispatch", "event: error\ndata: x\n\ndata: y\n\n", []refEvent{{Type: "error", Data: "x"}, msg("y")}},
		{"an event without data is not dispatched, and its type does not carry over", "event: ping\n\ndata: y\n\n", []refEvent{msg("y")}},
		{"an id with NUL is ignored", "id: 1\nid: 2\x003\ndata: x\n\n", []refEvent{{Data: "x", ID: "1"}}},
		{"comments and unknown fields are ignored", ": hi\nfoo: bar\nretry: 10\ndata: x\n\n", []refEvent{msg("x")}},
		{"a field name is the whole line before the first colon", " data: x\ndata: a: b\n\n", []refEvent{msg("a: b")}},
		{"a bare JSON line is handed out", "{\"error\":\"e\"}\ndata: x\n\n", []refEvent{{Bare: true, Data: "{\"error\":\"e\"}"}, msg("x")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if ref := refSSE([]byte(tt.stream)).events; !slices.Equal(ref, tt.want) {
				t.Errorf("the reference says %+v, want %+v", ref, tt.want)
			}
			// Whole, a byte at a time, and in a buffer of 4 bytes.
			for _, cuts := range [][]byte{nil, bytes.Repeat([]byte{1}, len(tt.stream))} {
				for _, size := range []int{sseBufSize, 4} {
					got, _, err := readAll([]byte(tt.stream), cuts, size, false)
					if err != io.EOF || !slices.Equal(got, tt.want) {
						t.Errorf("cuts %v, buffer %d: %+v (%v), want %+v", cuts != nil, size, got, err, tt.want)
					}
				}
			}
		})
	}
}

// A CR at the end of one read is a line end at once: the event it ends is
// handed out without waiting for the next read (which would be the next
// event, seconds later), and an LF that starts that read is skipped.
func TestSSEReaderCRAtReadBoundary(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	sr := newSSEReader(pr)
	go func() { _, _ = pw.Write([]byte("data: a\r\n\r")) }()
	ev, err := sr.next()
	if err != nil || string(ev.data) != "a" {
		t.Fatalf("first event %q, %v", ev.data, err)
	}
	go func() {
		_, _ = pw.Write([]byte("\ndata: b\n\n"))
		_ = pw.Close()
	}()
	ev, err = sr.next()
	if err != nil || string(ev.data) != "b" {
		t.Fatalf("second event %q, %v", ev.data, err)
	}
	if _, err := sr.next(); err != io.EOF || sr.hasTail {
		t.Fatalf("after the stream: %v, tail %v", err, sr.hasTail)
	}
}

// An event longer than MaxSSELine over many data lines fails the stream
// instead of growing without bound.
func TestSSEEventTooLong(t *testing.T) {
	t.Parallel()
	line := "data: " + strings.Repeat("x", 1<<20) + "\n"
	r := io.MultiReader(strings.NewReader(strings.Repeat(line, MaxSSELine>>20+2)), strings.NewReader("\n"))
	sr := newSSEReader(r)
	if _, err := sr.next(); !errors.Is(err, errSSEEventTooLong) {
		t.Fatalf("next: %v, want errSSEEventTooLong", err)
	}
}
