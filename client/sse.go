package client

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// go-openai's stream reader (RecvRaw) loses what real engines send: it
// returns io.EOF both for `data: [DONE]` and for a body that simply ends, and
// it accumulates every non-data line of the stream (SSE comments such as
// `: ping`, event lines) into one buffer that it parses as JSON when a
// `data: {"error": …}` line arrives, so an error event after a comment comes
// back as an empty data line, its message lost. It also allocates per line
// (ReadBytes, regexp). The client therefore reads the body itself with
// sseReader (decision 0205; since 0207 it sends the request itself too).

// sseReader reads an event stream by the WHATWG parsing algorithm ("event
// stream interpretation", HTML §9.2.6; docs/decisions/0209-sse-as-specified.md):
// lines end at CRLF, LF or a lone CR (a CR that ends one read and an LF that
// starts the next are one line end), one leading UTF-8 BOM is dropped, a
// line starting with ':' is a comment, a line is `field:value` with one
// space after the colon dropped (or a field alone, its value empty), `data`
// lines accumulate joined by "\n", `event` sets the event's type, `id` the
// last event id (unless it holds a NUL), `retry` the reconnection time
// (digits only), any other field is ignored, and a blank line dispatches
// the event, unless it had no data line. Bytes are handed on as they came:
// the spec's UTF-8 decoding would only replace invalid sequences in the
// payload, and the delimiters are ASCII, which no UTF-8 sequence holds.
//
// Beyond the spec, for what llmbench reads: a line whose first byte is '{'
// is handed out as it is (sseBare) besides being ignored as a field — a
// server that answers 200 with a JSON error instead of a stream says why
// there; at the end of the body the event being assembled (with a last line
// that had no line end) is kept in tail for the caller to judge, where the
// spec drops it; a body that starts with gzip's magic bytes fails
// (errUnlabelledGzip): the spec would read it as ignored fields.
//
// The common case (one data line, then the blank line, in one read)
// allocates nothing and copies nothing: the event's data is a slice of the
// read buffer. The data is copied into a slice the reader keeps (and reuses)
// only when the event spans several data lines or the buffer must move
// before the blank line arrives. Lines longer than the buffer are assembled
// in another kept slice.
type sseReader struct {
	src    io.Reader
	buf    []byte // the read buffer; unread bytes are buf[r:w]
	r, w   int
	rerr   error // what the last read returned, handed out once buf[r:w] is used up
	skipLF bool  // the last line ended with a CR: an LF right after it belongs to that line end
	begun  bool  // the start of the body (BOM, gzip magic) was looked at
	long   []byte

	// The event being assembled (the spec's buffers).
	nData  int    // data lines so far
	pend   []byte // the data buffer, without its last "\n": a slice of buf or long, or data
	owned  bool   // pend is data
	data   []byte // the data buffer when it had to be copied
	typ    []byte // the event type buffer
	lastID []byte // the last event ID buffer
	retry  int64  // the reconnection time the stream asked for, in ms; -1 when it did not
	big    bool   // the data buffer passed MaxSSELine

	empty int // lines read since the last event with data

	// tail is the event being assembled when the body ended (with its
	// unterminated last line read as a line), or that last line when it
	// starts with '{'; hasTail says there is one.
	tail    sseEvent
	hasTail bool
}

// sseEvent is what sseReader.next hands out: a dispatched event, or a bare
// line. Its slices are valid until the following call.
type sseEvent struct {
	bare bool   // not an event: a line starting with '{', in data
	typ  []byte // the event type; empty means "message"
	data []byte
	id   []byte // the last event ID when the event was dispatched
}

// message reports whether the event has the default type.
func (e *sseEvent) message() bool { return len(e.typ) == 0 || string(e.typ) == "message" }

// sseBufSize is the read buffer, held by every stream in flight (16,000 at
// once: 16 MB at 1 KiB, 128 MB at the 8 KiB it once was). Content chunks,
// even SGLang's and vLLM's with their ids, model and usage, are 250 to 500
// bytes and fit; a longer line (llama.cpp's last chunk with its timings,
// chunks with logprobs) is assembled in s.long, which keeps its capacity for
// the rest of the stream: it costs a copy, not an allocation per chunk. The
// buffer does not decide how much is read per system call: the transport's
// own buffer, under the chunked-body decoder, does. See decision 0207.
const sseBufSize = 1 << 10

// MaxSSELine caps one SSE line, its line end included, and the data of one
// event. Longer real chunks do not exist (the longest seen, llama.cpp's last
// with its timings, is a few KiB); a server that sends a line with no end,
// or data lines with no blank line, would otherwise grow the slice they are
// assembled in until memory runs out. A stream that passes it fails as
// malformed_chunk with ErrSSELineTooLong (or errSSEEventTooLong), and its
// connection is closed (the body is not read to its end).
const MaxSSELine = 16 << 20

// ErrSSELineTooLong ends a stream holding a line longer than MaxSSELine.
var ErrSSELineTooLong = fmt.Errorf("SSE line longer than %d MiB", MaxSSELine>>20)

// errSSEEventTooLong ends a stream holding an event whose data lines add up
// to more than MaxSSELine.
var errSSEEventTooLong = fmt.Errorf("SSE event's data longer than %d MiB", MaxSSELine>>20)

// errTooManyEmptyLines ends a stream that sends nothing but lines that
// dispatch no event with data for longer than emptyLinesLimit lines.
var errTooManyEmptyLines = errors.New("too many consecutive non-data lines")

// errNoProgress ends a stream whose body keeps returning nothing and no
// error (a broken io.Reader; bufio gives up the same way).
var errNoProgress = errors.New("the response body returned no data and no error 100 times")

// errUnlabelledGzip ends a stream that is gzip data although the response
// named no content coding.
var errUnlabelledGzip = errors.New("the body is gzip data but the response has no Content-Encoding header (a proxy compressed it and dropped the header?)")

var (
	utf8BOM   = []byte("\xef\xbb\xbf")
	gzipMagic = []byte("\x1f\x8b")
)

func newSSEReader(r io.Reader) *sseReader { return newSSEReaderSize(r, sseBufSize) }

func newSSEReaderSize(r io.Reader, size int) *sseReader {
	return &sseReader{src: r, buf: make([]byte, size), retry: -1}
}

// next returns the next event or bare line. At the end of the body it
// returns the read error (io.EOF for a clean end), and s.tail holds what
// was being assembled (see sseReader).
func (s *sseReader) next() (sseEvent, error) {
	for {
		line, err := s.line()
		if err != nil {
			s.setTail(line)
			return sseEvent{}, err
		}
		if ev, ok := s.process(line); ok {
			if ev.bare || len(ev.data) > 0 {
				s.empty = 0
			}
			return ev, nil
		}
		s.empty++
		if s.empty > emptyLinesLimit {
			return sseEvent{}, errTooManyEmptyLines
		}
	}
}

// process applies one line to the event being assembled: ok when it
// dispatched an event (or is a bare line).
func (s *sseReader) process(line []byte) (ev sseEvent, ok bool) {
	if len(line) == 0 {
		return s.dispatch()
	}
	switch line[0] {
	case ':':
		return ev, false
	case '{':
		return sseEvent{bare: true, data: line}, true
	}
	// The common case first: a data line.
	if len(line) >= 5 && string(line[:5]) == "data:" {
		s.addData(dropSpace(line[5:]))
		return ev, false
	}
	field, value := line, line[len(line):]
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], dropSpace(line[i+1:])
	}
	switch string(field) {
	case "data":
		s.addData(value)
	case "event":
		s.typ = append(s.typ[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			s.lastID = append(s.lastID[:0], value...)
		}
	case "retry":
		if ms, ok := retryValue(value); ok {
			s.retry = ms
		}
	}
	return ev, false
}

// dropSpace removes the one space the spec allows after the colon.
func dropSpace(v []byte) []byte {
	if len(v) > 0 && v[0] == ' ' {
		return v[1:]
	}
	return v
}

// retryValue reads a retry field: ASCII digits only (at least one), base
// ten, saturating at the largest int64.
func retryValue(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			n = math.MaxInt64
			continue
		}
		n = n*10 + d
	}
	return n, true
}

// addData appends a data line's value to the data buffer.
func (s *sseReader) addData(v []byte) {
	s.nData++
	if s.nData == 1 {
		s.pend, s.owned = v, false
		return
	}
	s.own()
	if len(s.data)+1+len(v) > MaxSSELine {
		s.big = true // line fails the stream
		return
	}
	s.data = append(append(s.data, '\n'), v...)
	s.pend = s.data
}

// own copies the data buffer out of buf or long, which are about to be
// overwritten.
func (s *sseReader) own() {
	if s.nData == 0 || s.owned {
		return
	}
	s.data = append(s.data[:0], s.pend...)
	s.pend, s.owned = s.data, true
}

// dispatch ends the event at a blank line.
func (s *sseReader) dispatch() (sseEvent, bool) {
	if s.nData == 0 {
		s.typ = s.typ[:0]
		return sseEvent{}, false
	}
	ev := sseEvent{typ: s.typ, data: s.pend, id: s.lastID}
	s.nData, s.pend, s.owned = 0, nil, false
	s.data = s.data[:0]
	s.typ = s.typ[:0]
	return ev, true
}

// setTail reads the last, unterminated line as a line and keeps the event
// being assembled, or that line when it is bare.
func (s *sseReader) setTail(last []byte) {
	s.tail, s.hasTail = sseEvent{}, false
	var bare sseEvent
	if len(last) > 0 {
		bare, _ = s.process(last)
	}
	switch {
	case s.nData > 0:
		s.tail, s.hasTail = sseEvent{typ: s.typ, data: s.pend, id: s.lastID}, true
	case bare.bare:
		s.tail, s.hasTail = bare, true
	}
}

// line reads one line without its line end. On an error it returns what it
// read of an unterminated line.
func (s *sseReader) line() ([]byte, error) {
	if !s.begun {
		if err := s.begin(); err != nil {
			return nil, err
		}
	}
	if s.big {
		return nil, errSSEEventTooLong
	}
	inLong := false
	for empties := 0; ; {
		b := s.buf[s.r:s.w]
		if s.skipLF && len(b) > 0 {
			s.skipLF = false
			if b[0] == '\n' {
				s.r++
				b = b[1:]
			}
		}
		end, cr := lineEnd(b)
		if end >= 0 {
			line := b[:end]
			s.r += end + 1
			if cr {
				if end+1 < len(b) {
					if b[end+1] == '\n' {
						s.r++
					}
				} else {
					s.skipLF = true
				}
			}
			if !inLong {
				return line, nil
			}
			if len(s.long)+len(line) > MaxSSELine {
				return nil, ErrSSELineTooLong
			}
			s.long = append(s.long, line...)
			return s.long, nil
		}
		if s.rerr != nil {
			s.r = s.w
			if inLong {
				return append(s.long, b...), s.rerr
			}
			return b, s.rerr
		}
		if s.w == len(s.buf) {
			if s.r > 0 {
				s.own()
				s.w = copy(s.buf, b)
				s.r = 0
			} else {
				// A line longer than the buffer.
				if err := s.spill(inLong, b); err != nil {
					return nil, err
				}
				inLong = true
			}
		}
		n, err := s.src.Read(s.buf[s.w:])
		s.w += n
		s.rerr = err
		if n == 0 && err == nil {
			if empties++; empties >= 100 {
				s.rerr = errNoProgress
			}
		}
	}
}

// spill moves a full buffer holding part of a long line into s.long.
func (s *sseReader) spill(inLong bool, b []byte) error {
	if !inLong {
		s.own()
		s.long = s.long[:0]
	}
	if len(s.long)+len(b) > MaxSSELine {
		return ErrSSELineTooLong
	}
	if len(s.long)+len(b) > cap(s.long) {
		// Double: append grows large slices by 1.25×, which for a line read
		// 1 KiB at a time would copy it about 5 times over.
		s.long = slices.Grow(s.long, max(len(b), cap(s.long)))
	}
	s.long = append(s.long, b...)
	s.r, s.w = 0, 0
	return nil
}

// lineEnd finds the first line end in b: its index, and whether it is a CR.
// -1 when b holds none.
func lineEnd(b []byte) (int, bool) {
	i := bytes.IndexByte(b, '\n')
	head := b
	if i >= 0 {
		head = b[:i]
	}
	if j := bytes.IndexByte(head, '\r'); j >= 0 {
		return j, true
	}
	return i, false
}

// begin looks at the start of the body: one UTF-8 BOM is dropped, and gzip
// data is refused. It reads until it can tell (3 bytes, or the end).
func (s *sseReader) begin() error {
	for empties := 0; ; {
		b := s.buf[s.r:s.w]
		bomPrefix := len(b) < len(utf8BOM) && bytes.HasPrefix(utf8BOM, b)
		gzipPrefix := len(b) < len(gzipMagic) && bytes.HasPrefix(gzipMagic, b)
		if s.rerr != nil || !bomPrefix && !gzipPrefix {
			break
		}
		n, err := s.src.Read(s.buf[s.w:])
		s.w += n
		s.rerr = err
		if n == 0 && err == nil {
			if empties++; empties >= 100 {
				s.rerr = errNoProgress
			}
		}
	}
	s.begun = true
	b := s.buf[s.r:s.w]
	switch {
	case bytes.HasPrefix(b, utf8BOM):
		s.r += len(utf8BOM)
	case bytes.HasPrefix(b, gzipMagic):
		return errUnlabelledGzip
	}
	return nil
}
