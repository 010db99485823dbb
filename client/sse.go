package client

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
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

// sseReader splits an SSE body into lines and hands out the data payloads.
// A line is judged as go-openai judges it: trimmed of white space
// (bytes.TrimSpace), a data line is `data:` then RE2 \s* then the payload,
// and the payload `[DONE]` ends the stream; a line is handed out once its
// '\n' arrived (a last line without one is left in tail). Every other line
// (blank lines, `: comment`, `event:`, `id:`, `retry:`, and a data line with
// nothing after `data:`, which some servers send as a keep-alive) is
// skipped, except a bare line that starts with '{', which is handed out too:
// a server that answers 200 with a JSON error instead of a stream says why
// there. Reading allocates nothing unless a line is longer than the buffer.
type sseReader struct {
	br       *bufio.Reader
	long     []byte  // a line longer than br's buffer, assembled here
	tail     []byte  // the payload of an unterminated last line, set at the end
	tailKind sseKind // what that line is
	empty    int     // consecutive lines skipped
}

// sseKind says what sseReader.next found.
type sseKind uint8

const (
	sseData sseKind = iota // a data line's payload
	sseDone                // data: [DONE]
	sseBare                // a non-SSE line starting with '{'
)

// sseBufSize is the read buffer, held by every stream in flight (16,000 at
// once: 16 MB at 1 KiB, 128 MB at the 8 KiB it once was). Content chunks,
// even SGLang's and vLLM's with their ids, model and usage, are 250 to 500
// bytes and fit; a longer line (llama.cpp's last chunk with its timings,
// chunks with logprobs) is assembled in s.long, which keeps its capacity for
// the rest of the stream: it costs a copy, not an allocation per chunk. The
// buffer does not decide how much is read per system call: the transport's
// own buffer, under the chunked-body decoder, does. See decision 0207.
const sseBufSize = 1 << 10

// MaxSSELine caps one SSE line, '\n' included. Longer real chunks do not
// exist (the longest seen, llama.cpp's last with its timings, is a few KiB);
// a server that sends a line with no end would otherwise grow the slice
// the line is assembled in until memory runs out. A stream whose line
// passes it fails as malformed_chunk with ErrSSELineTooLong, and its
// connection is closed (the body is not read to its end).
const MaxSSELine = 16 << 20

// ErrSSELineTooLong ends a stream holding a line longer than MaxSSELine.
var ErrSSELineTooLong = fmt.Errorf("SSE line longer than %d MiB", MaxSSELine>>20)

// errTooManyEmptyLines ends a stream that sends nothing but skipped lines
// for longer than emptyLinesLimit lines.
var errTooManyEmptyLines = errors.New("too many consecutive non-data lines")

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{br: bufio.NewReaderSize(r, sseBufSize)}
}

// next returns the next payload and its kind; the payload is valid until the
// following call (a [DONE] comes with its payload, for the tail). At the
// end of the body it returns the read error (io.EOF for a clean end), and
// s.tail and s.tailKind hold a last line that had no '\n' when it is one
// next would hand out (go-openai drops such a line; the caller may still
// look at it).
func (s *sseReader) next() (sseKind, []byte, error) {
	for {
		line, err := s.line()
		kind, p, ok := classify(bytes.TrimSpace(line))
		if err != nil {
			s.tail, s.tailKind = nil, 0
			if ok {
				s.tail, s.tailKind = p, kind
			}
			return 0, nil, err
		}
		if ok {
			s.empty = 0
			return kind, p, nil
		}
		s.empty++
		if s.empty > emptyLinesLimit {
			return 0, nil, errTooManyEmptyLines
		}
	}
}

// line reads one line, '\n' included; on an error it returns what it read
// of an unterminated line. A line longer than MaxSSELine is
// ErrSSELineTooLong, with nothing read of it.
func (s *sseReader) line() ([]byte, error) {
	b, err := s.br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return b, err
	}
	s.long = append(s.long[:0], b...)
	for {
		b, err = s.br.ReadSlice('\n')
		if len(s.long)+len(b) > MaxSSELine {
			return nil, ErrSSELineTooLong
		}
		if len(s.long)+len(b) > cap(s.long) {
			// Double: append grows large slices by 1.25×, which for a
			// line read 2 KiB at a time would copy it about 5 times over.
			s.long = slices.Grow(s.long, max(len(b), cap(s.long)))
		}
		s.long = append(s.long, b...)
		if err != bufio.ErrBufferFull {
			return s.long, err
		}
	}
}

// classify judges a trimmed line; ok is false for a line to skip.
func classify(line []byte) (kind sseKind, payload []byte, ok bool) {
	if p, ok := dataPayload(line); ok && len(p) > 0 {
		if string(p) == doneMarker {
			return sseDone, p, true
		}
		return sseData, p, true
	}
	if len(line) > 0 && line[0] == '{' {
		return sseBare, line, true
	}
	return 0, nil, false
}

const (
	dataPrefix = "data:"
	doneMarker = "[DONE]"
)

// dataPayload strips `data:` and RE2 \s* from a trimmed line.
func dataPayload(line []byte) ([]byte, bool) {
	if !bytes.HasPrefix(line, []byte(dataPrefix)) {
		return nil, false
	}
	p := line[len(dataPrefix):]
	for len(p) > 0 && isRE2Space(p[0]) {
		p = p[1:]
	}
	return p, true
}

// isRE2Space reports the bytes of RE2's \s: no '\v'.
func isRE2Space(c byte) bool {
	return c == ' ' || c == '\t' || c == '\f' || c == '\r' || c == '\n'
}
