package inputfile

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// A reader bounded at n gives n bytes and then a *BoundError naming the
// file; a file of exactly n bytes reads to its end.
func TestBoundStopsAtTheBound(t *testing.T) {
	t.Parallel()
	k := Kind{What: "data file", MaxBytes: 10}
	for _, tc := range []struct {
		size    int
		wantErr bool
	}{{0, false}, {9, false}, {10, false}, {11, true}, {1000, true}} {
		for _, chunked := range []bool{false, true} {
			var r io.Reader = bytes.NewReader(bytes.Repeat([]byte("x"), tc.size))
			if chunked {
				r = iotest.OneByteReader(r)
			}
			got, err := io.ReadAll(Bound(r, "p.jsonl", k))
			var be *BoundError
			switch {
			case tc.wantErr && (!errors.As(err, &be) || len(got) != 10):
				t.Errorf("%d bytes: read %d, %v; want 10 then a *BoundError", tc.size, len(got), err)
			case tc.wantErr && err.Error() != "data file p.jsonl grew past the 10-byte bound on a data file while it was read":
				t.Errorf("%d bytes: %q", tc.size, err)
			case !tc.wantErr && (err != nil || len(got) != tc.size):
				t.Errorf("%d bytes: read %d, %v", tc.size, len(got), err)
			}
		}
	}
	if r := strings.NewReader("x"); Bound(r, "p", Kind{What: "log"}) != io.Reader(r) {
		t.Error("a kind with no size bound must not wrap the reader")
	}
}

// ReadAll reads a regular file whole; a missing one is fs.ErrNotExist.
func TestReadAll(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(path, []byte(`{"id":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadAll(path, RunFile); err != nil || string(b) != `{"id":"x"}` {
		t.Errorf("ReadAll = %q, %v", b, err)
	}
	if _, err := ReadAll(path+".missing", RunFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

// Lines cuts lines as bufio.ScanLines does (CRLF, no final newline, NUL
// bytes and invalid UTF-8 kept), and a line over the bound ends the
// reading with the file, the line and the bound.
func TestLines(t *testing.T) {
	t.Parallel()
	k := Kind{What: "data file", MaxLine: 8}
	cases := []struct {
		name, in string
		want     []string
		err      string
	}{
		{"empty", "", nil, ""},
		{"lf", "a\nbb\n", []string{"a", "bb"}, ""},
		{"crlf", "a\r\nbb\r\n", []string{"a", "bb"}, ""},
		{"no final newline", "a\nbb", []string{"a", "bb"}, ""},
		{"blank lines", "\n\na\n", []string{"", "", "a"}, ""},
		{"nul and bad utf-8", "\x00\xff\xfe\n", []string{"\x00\xff\xfe"}, ""},
		{"exactly the bound", "12345678\n", []string{"12345678"}, ""},
		{"exactly the bound, crlf", "12345678\r\n", []string{"12345678"}, ""},
		{"exactly the bound, last", "12345678", []string{"12345678"}, ""},
		{"one over", "a\n123456789\nb\n", []string{"a"}, "f.jsonl:2: line longer than 8 bytes (the bound on one line of a data file)"},
		{"one over, crlf", "123456789\r\n", nil, "f.jsonl:1: line longer than 8 bytes (the bound on one line of a data file)"},
		{"far over, no newline", strings.Repeat("z", 1000), nil, "f.jsonl:1: line longer than 8 bytes (the bound on one line of a data file)"},
	}
	for _, tc := range cases {
		for _, chunked := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tc.in)
			if chunked {
				r = iotest.OneByteReader(r)
			}
			l := NewLines(r, "f.jsonl", k)
			var got []string
			for l.Next() {
				if l.Line() != len(got)+1 {
					t.Errorf("%s: line %d numbered %d", tc.name, len(got)+1, l.Line())
				}
				got = append(got, string(l.Bytes()))
			}
			err := l.Err()
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
				t.Errorf("%s (chunked %v): %q, %v; want %q, %q", tc.name, chunked, got, err, tc.want, tc.err)
			}
			if l.Next() {
				t.Errorf("%s: Next after the end", tc.name)
			}
		}
	}
	// A read error is placed at the line it stopped.
	l := NewLines(io.MultiReader(strings.NewReader("a\nb\n"), iotest.ErrReader(errors.New("disk gone"))), "f.jsonl", k)
	for l.Next() {
	}
	if err := l.Err(); err == nil || err.Error() != "f.jsonl:3: disk gone" {
		t.Errorf("a read error: %v", err)
	}
	// A bound the stream hits is passed on as it is.
	l = NewLines(Bound(strings.NewReader("a\nb\nc\n"), "f.jsonl", Kind{What: "data file", MaxBytes: 3}), "f.jsonl", k)
	for l.Next() {
	}
	var be *BoundError
	if err := l.Err(); !errors.As(err, &be) || be.Line != 0 {
		t.Errorf("the size bound while reading lines: %v", err)
	}
}

// Records bounds each record from its mark and places offsets at lines.
func TestRecords(t *testing.T) {
	t.Parallel()
	in := "[\n{\"a\": 1},\n{\"b\":\n 2}\n]\n"
	rs := NewRecords(iotest.OneByteReader(strings.NewReader(in)), "f.json", Kind{What: "data file", MaxLine: 64})
	b, err := io.ReadAll(rs)
	if err != nil || string(b) != in {
		t.Fatalf("read %q, %v", b, err)
	}
	for off, line := range map[int64]int{0: 1, 1: 1, 2: 2, 12: 3, 18: 4, 100: 6} {
		if got := rs.LineAt(off); got != line {
			t.Errorf("LineAt(%d) = %d, want %d", off, got, line)
		}
	}
	rs.Mark(12)
	if got := rs.LineAt(0); got != 3 {
		t.Errorf("LineAt before the mark = %d, want the mark's line 3", got)
	}
	if got := rs.LineAt(19); got != 4 {
		t.Errorf("LineAt(19) after a mark = %d, want 4", got)
	}

	// A record longer than the bound: the reading stops at bound+1 bytes
	// past the mark, at the mark's line.
	long := "[\n\n{\"a\": \"" + strings.Repeat("x", 100) + "\"}]"
	rs = NewRecords(strings.NewReader(long), "f.json", Kind{What: "data file", MaxLine: 16})
	br := bufio.NewReaderSize(rs, 16)
	if _, err := br.Discard(3); err != nil {
		t.Fatal(err)
	}
	rs.Mark(3)
	_, err = io.ReadAll(br)
	var be *BoundError
	if !errors.As(err, &be) || err.Error() != "f.json:3: record longer than 16 bytes (the bound on one line or record of a data file)" {
		t.Errorf("a long record: %v", err)
	}
}
