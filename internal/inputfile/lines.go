package inputfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Lines hands out the lines of a stream with their 1-based numbers, as
// bufio.Scanner's ScanLines cuts them (a trailing \r dropped), each at most
// the kind's MaxLine bytes: a longer one ends the reading with a
// *BoundError naming the file and the line.
type Lines struct {
	name string
	k    Kind
	sc   *bufio.Scanner
	n    int
	long bool // the line after n is over the bound
}

// NewLines reads the lines of r, the file name; k.MaxLine must be set.
func NewLines(r io.Reader, name string, k Kind) *Lines {
	sc := bufio.NewScanner(r)
	// The scanner's limit is its buffer: two more bytes than a line may
	// hold, for the "\r\n" it looks for (Next holds the line itself to
	// the bound).
	sc.Buffer(make([]byte, 0, min(64<<10, k.MaxLine+2)), k.MaxLine+2)
	return &Lines{name: name, k: k, sc: sc}
}

// Next reads the next line; false at the end or on an error (Err).
func (l *Lines) Next() bool {
	if l.long || !l.sc.Scan() {
		return false
	}
	if len(l.sc.Bytes()) > l.k.MaxLine {
		l.long = true
		return false
	}
	l.n++
	return true
}

// Bytes is the line Next read, valid until the next call.
func (l *Lines) Bytes() []byte { return l.sc.Bytes() }

// Line is the number of the line Next read.
func (l *Lines) Line() int { return l.n }

// Err is why the reading stopped early (nil at the end of the stream),
// naming the file and the line.
func (l *Lines) Err() error {
	err := l.sc.Err()
	var be *BoundError
	switch {
	case l.long:
		return &BoundError{Path: l.name, Line: l.n + 1, Kind: l.k}
	case err == nil:
		return nil
	case errors.Is(err, bufio.ErrTooLong):
		return &BoundError{Path: l.name, Line: l.n + 1, Kind: l.k}
	case errors.As(err, &be):
		return err
	}
	return &lineError{name: l.name, line: l.n + 1, err: err}
}

// lineError places err at a line of a file.
type lineError struct {
	name string
	line int
	err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.name, e.line, e.err) }
func (e *lineError) Unwrap() error { return e.err }
