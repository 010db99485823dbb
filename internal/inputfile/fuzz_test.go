package inputfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"testing/iotest"
)

// seedFiles adds the real data files of the repository (datasets, traces,
// length files, a run's records) as seeds.
func seedFiles(f *testing.F, add func([]byte)) {
	for _, pattern := range []string{"../../workload/testdata/*", "../../scenarios/*.jsonl", "../../scenarios/testdata/*.csv", "../../report/testdata/v1-run/*.jsonl"} {
		names, _ := filepath.Glob(pattern)
		for _, n := range names {
			if b, err := ReadAll(n, Data); err == nil {
				add(b)
			}
		}
	}
}

// refLines is the line cutting Lines promises, written plainly: split at
// '\n', drop one '\r' before it, no line after a final '\n'; the first line
// over max ends it with its number.
func refLines(data []byte, max int) (lines []string, tooLong int) {
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) > max {
			return lines, n
		}
		lines = append(lines, string(line))
	}
	return lines, 0
}

// Lines hands out exactly the reference's lines, numbered, and stops at
// the first line over the bound with a *BoundError at its number, however
// the stream's reads are cut.
func FuzzLines(f *testing.F) {
	for _, s := range []string{"", "a\nb", "a\r\nb\r\n", "\r\r\n\n", "123456789\n1", "\x00\xff\n"} {
		f.Add([]byte(s), uint8(8), false)
	}
	seedFiles(f, func(b []byte) { f.Add(b, uint8(200), true) })
	f.Fuzz(func(t *testing.T, data []byte, max uint8, oneByte bool) {
		k := Kind{What: "data file", MaxLine: int(max) + 1}
		want, tooLong := refLines(data, k.MaxLine)
		var r io.Reader = bytes.NewReader(data)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		l := NewLines(r, "f", k)
		var got []string
		for l.Next() {
			got = append(got, string(l.Bytes()))
			if l.Line() != len(got) {
				t.Fatalf("line %d numbered %d", len(got), l.Line())
			}
		}
		err := l.Err()
		var be *BoundError
		switch {
		case tooLong == 0 && err != nil:
			t.Fatalf("no line over %d, got %v", k.MaxLine, err)
		case tooLong > 0 && (!errors.As(err, &be) || be.Line != tooLong || be.Path != "f"):
			t.Fatalf("line %d is over %d, got %v", tooLong, k.MaxLine, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d lines, want %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("line %d: %q, want %q", i+1, got[i], want[i])
			}
		}
	})
}

// Records, read by a JSON decoder that marks each element of an array,
// places any offset at the line a plain count of newlines gives, and
// refuses an element over the bound at the line it starts; the elements it
// lets through are those the whole-file decoder gives.
func FuzzRecords(f *testing.F) {
	for _, s := range []string{"[]", "[\n1,\n2\n]", "[{\"a\":\n\"b\"}]", "[\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"]", "[1,,2]", "{}"} {
		f.Add([]byte(s), uint8(16))
	}
	seedFiles(f, func(b []byte) { f.Add(b, uint8(255)) })
	f.Fuzz(func(t *testing.T, data []byte, max uint8) {
		k := Kind{What: "data file", MaxLine: int(max) + 1}
		rs := NewRecords(iotest.HalfReader(bytes.NewReader(data)), "f", k)
		dec := json.NewDecoder(rs)
		lineAt := func(off int64) int { return bytes.Count(data[:min(max64(off, 0), int64(len(data)))], []byte{'\n'}) + 1 }
		if _, err := dec.Token(); err != nil {
			return
		}
		var whole []json.RawMessage
		_ = json.Unmarshal(data, &whole)
		for i := 0; dec.More(); i++ {
			start := dec.InputOffset()
			rs.Mark(start)
			var v json.RawMessage
			err := dec.Decode(&v)
			var be *BoundError
			if errors.As(err, &be) {
				if be.Line != lineAt(start) || !be.Record {
					t.Fatalf("element %d: %v, want its start's line %d", i, err, lineAt(start))
				}
				return
			}
			if err != nil {
				var syn *json.SyntaxError
				if errors.As(err, &syn) && rs.LineAt(syn.Offset) != lineAt(max64(syn.Offset, start)) {
					t.Fatalf("syntax error at %d: line %d, want %d", syn.Offset, rs.LineAt(syn.Offset), lineAt(syn.Offset))
				}
				return
			}
			if end := dec.InputOffset(); rs.LineAt(end) != lineAt(end) {
				t.Fatalf("offset %d: line %d, want %d", end, rs.LineAt(end), lineAt(end))
			}
			if len(v) > k.MaxLine+1 {
				t.Fatalf("element %d of %d bytes let through a bound of %d", i, len(v), k.MaxLine)
			}
			if whole != nil && (i >= len(whole) || !bytes.Equal(compact(v), compact(whole[i]))) {
				t.Fatalf("element %d: %s, the whole-file decoder's %s", i, v, whole[i])
			}
		}
	})
}

func max64(a, b int64) int64 { return max(a, b) }

func compact(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}
