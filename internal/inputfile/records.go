package inputfile

import (
	"bytes"
	"io"
)

// Records bounds the records a decoder reads from a stream — a JSON
// array's elements, CSV records — as Lines bounds lines: before each
// record the caller marks where it starts (the decoder's input offset),
// and a read that would take the stream more than k.MaxLine bytes past the
// mark fails with a *BoundError at the mark's line. It keeps the bytes
// since the mark, so LineAt can place a decoder's error at its line
// without the file in memory.
type Records struct {
	r    io.Reader
	name string
	k    Kind
	// win holds the stream's bytes from base on, as handed to the
	// decoder; the record being read starts at win[mark]. The bytes
	// before the mark are dropped only once they are half the window, so
	// that marking every small record of a large read costs no copy.
	win  []byte
	mark int
	base int64 // the stream offset of win[0]
	nl   int   // newlines before win[mark]
}

// NewRecords reads the records of r, the file name; k.MaxLine must be set.
func NewRecords(r io.Reader, name string, k Kind) *Records {
	return &Records{r: r, name: name, k: k}
}

func (s *Records) Read(p []byte) (int, error) {
	// One byte past the bound may be read: a decoder may look one past a
	// record of exactly the bound (after a number).
	room := s.k.MaxLine + 1 - (len(s.win) - s.mark)
	if room <= 0 {
		return 0, &BoundError{Path: s.name, Line: s.nl + 1, Record: true, Kind: s.k}
	}
	if len(p) > room {
		p = p[:room]
	}
	if s.mark > 0 && s.mark >= len(s.win)/2 {
		s.win = s.win[:copy(s.win, s.win[s.mark:])]
		s.base += int64(s.mark)
		s.mark = 0
	}
	n, err := s.r.Read(p)
	s.win = append(s.win, p[:n]...)
	return n, err
}

// Mark says the next record starts at offset off of the stream (at or
// after the last mark, within what was read).
func (s *Records) Mark(off int64) {
	k := max(s.index(off), s.mark)
	s.nl += bytes.Count(s.win[s.mark:k], []byte{'\n'})
	s.mark = k
}

// LineAt is the 1-based line of offset off (clamped to what is kept: the
// last mark to what was read).
func (s *Records) LineAt(off int64) int {
	k := max(s.index(off), s.mark)
	return s.nl + bytes.Count(s.win[s.mark:k], []byte{'\n'}) + 1
}

func (s *Records) index(off int64) int {
	return int(min(max(off-s.base, 0), int64(len(s.win))))
}
