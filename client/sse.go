package client

import (
	"bytes"
	"io"
)

// go-openai's stream reader returns io.EOF both for the `data: [DONE]` line
// and for a body that simply ends, so on its own a truncated stream looks
// finished. sseBody wraps the response body and lets a doneDetector see every
// byte go-openai reads, so Client.Do can tell the two apart.

// sseBody is the response body as go-openai reads it.
type sseBody struct {
	rc  io.ReadCloser
	det doneDetector
}

// Read reads from the real body and shows the bytes to the detector.
func (b *sseBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.det.scan(p[:n])
	return n, err
}

// Close closes the real body.
func (b *sseBody) Close() error { return b.rc.Close() }

// done reports whether a complete `data: [DONE]` line went by.
func (b *sseBody) done() bool { return b.det.done }

// doneDetector remembers whether a complete line `data: [DONE]` went by in
// the bytes given to scan, in any number of pieces. It applies go-openai's own
// test — bytes.TrimSpace of the line, then `^data:\s*`, then exactly "[DONE]"
// — for ASCII whitespace (Unicode spaces around [DONE] are not recognised). A
// line counts only once its '\n' arrived, as in go-openai, which drops a last
// line without one. It keeps a few bytes of state and never allocates.
type doneDetector struct {
	state detState
	pos   int // bytes of the current literal matched so far
	done  bool
}

type detState uint8

const (
	detLead   detState = iota // start of line: skipping whitespace
	detPrefix                 // matching "data:"
	detGap                    // after "data:": skipping \s
	detMarker                 // matching "[DONE]"
	detTail                   // after "[DONE]": only whitespace may follow
	detSkip                   // this line cannot be [DONE]: wait for '\n'
)

const (
	dataPrefix = "data:"
	doneMarker = "[DONE]"
)

// isTrimSpace reports the ASCII bytes bytes.TrimSpace removes ('\n' aside).
func isTrimSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'
}

// isRE2Space reports the bytes of RE2's \s ('\n' aside): no '\v'.
func isRE2Space(c byte) bool {
	return c == ' ' || c == '\t' || c == '\f' || c == '\r'
}

// scan moves the detector over p.
func (d *doneDetector) scan(p []byte) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\n' {
			if d.state == detTail {
				d.done = true
			}
			d.state, d.pos = detLead, 0
			continue
		}
		switch d.state {
		case detLead:
			if isTrimSpace(c) {
				continue
			}
			d.state, d.pos = detPrefix, 0
			d.matchLiteral(c, dataPrefix, detGap)
		case detPrefix:
			d.matchLiteral(c, dataPrefix, detGap)
		case detGap:
			if isRE2Space(c) {
				continue
			}
			d.state, d.pos = detMarker, 0
			d.matchLiteral(c, doneMarker, detTail)
		case detMarker:
			d.matchLiteral(c, doneMarker, detTail)
		case detTail:
			if !isTrimSpace(c) {
				d.state = detSkip
			}
		}
		if d.state == detSkip {
			// Most lines are chunks: jump straight to the next line.
			j := bytes.IndexByte(p[i+1:], '\n')
			if j < 0 {
				return
			}
			i += j // the loop's i++ lands on the '\n'
		}
	}
}

// matchLiteral advances through lit with c; on a mismatch the line is
// skipped, on the literal's end the detector moves to next.
func (d *doneDetector) matchLiteral(c byte, lit string, next detState) {
	if c != lit[d.pos] {
		d.state = detSkip
		return
	}
	d.pos++
	if d.pos == len(lit) {
		d.state, d.pos = next, 0
	}
}
