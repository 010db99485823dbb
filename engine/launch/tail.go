package launch

import (
	"bytes"
	"strings"
	"sync"
	"unicode/utf8"
)

// tailBuffer keeps the last bytes written to it, so that an error can quote
// the engine's last lines without holding its whole output.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	partial bool // buf starts inside a line: bytes before it were dropped mid-line
}

func newTailBuffer(size int) *tailBuffer {
	return &tailBuffer{max: size, buf: make([]byte, 0, size)}
}

// Write keeps the last max bytes of everything written; it never fails.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	drop := len(t.buf) + len(p) - t.max
	switch {
	case drop <= 0:
		t.buf = append(t.buf, p...)
	case drop <= len(t.buf):
		t.partial = t.buf[drop-1] != '\n'
		t.buf = append(t.buf[:copy(t.buf, t.buf[drop:])], p...)
	default: // p alone overflows: keep its end
		d := drop - len(t.buf)
		t.partial = p[d-1] != '\n'
		t.buf = append(t.buf[:0], p[d:]...)
	}
	return len(p), nil
}

// Lines returns at most n of the last lines, oldest first. A line cut by the
// buffer's front is left out; of a line rewritten with carriage returns (a
// progress bar) only its last state is kept; lines longer than width (when
// over 0) are shortened, and trailing blank lines dropped.
func (t *tailBuffer) Lines(n, width int) []string {
	t.mu.Lock()
	b := bytes.Clone(t.buf)
	partial := t.partial
	t.mu.Unlock()
	if partial {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		} else {
			b = nil
		}
	}
	text := strings.TrimRight(string(b), "\r\n \t")
	if text == "" || n <= 0 {
		return nil
	}
	lines := strings.Split(text, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			l = l[j+1:]
		}
		if width > 0 && len(l) > width {
			l = shorten(l, width)
		}
		lines[i] = l
	}
	return lines
}

// shorten cuts s to at most width bytes without splitting a UTF-8 sequence.
func shorten(s string, width int) string {
	cut := width
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
