// Package errwriter lets a renderer write line after line and check for a
// write error once, at the end: the first error sticks, and every later
// write is skipped. The text and Markdown reports and the comparison
// renderer all write this way.
package errwriter

import (
	"fmt"
	"io"
)

// Writer wraps W; Err is its first write error.
type Writer struct {
	W   io.Writer
	Err error
}

// Write writes p unless an earlier write failed.
func (e *Writer) Write(p []byte) (int, error) {
	if e.Err != nil {
		return 0, e.Err
	}
	n, err := e.W.Write(p)
	e.Err = err
	return n, err
}

// Printf formats to the writer (fmt.Fprintf's result is in Err).
func (e *Writer) Printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }
