package errwriter

import (
	"bytes"
	"errors"
	"testing"
)

type failAfter struct {
	n   int
	buf bytes.Buffer
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("disk full")
	}
	f.n--
	return f.buf.Write(p)
}

func TestFirstErrorSticks(t *testing.T) {
	f := &failAfter{n: 1}
	w := &Writer{W: f}
	w.Printf("one %d\n", 1)
	w.Printf("two\n")
	w.Printf("three\n")
	if w.Err == nil || w.Err.Error() != "disk full" {
		t.Fatalf("Err = %v, want disk full", w.Err)
	}
	if got := f.buf.String(); got != "one 1\n" {
		t.Errorf("written %q, want only the line before the failure", got)
	}
}
