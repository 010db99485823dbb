package launch

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTailLines(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		max    int
		writes []string
		n      int
		width  int
		want   []string
	}{
		{"nothing", 64, nil, 5, 80, nil},
		{"fewer lines than asked", 64, []string{"a\nb\n"}, 5, 80, []string{"a", "b"}},
		{"last n, trailing blank lines dropped", 64, []string{"a\nb\nc\n\n\n"}, 2, 80, []string{"b", "c"}},
		{"a line split across writes", 64, []string{"loa", "ding\ndone"}, 5, 80, []string{"loading", "done"}},
		{"front cut mid-line drops the partial line", 8, []string{"abcdef\n", "xyz\n"}, 5, 80, []string{"xyz"}},
		{"front cut at a line end keeps the next line whole", 8, []string{"abc\n", "defg\n", "hi\n"}, 5, 80, []string{"defg", "hi"}},
		{"one write larger than the buffer", 6, []string{"0123456789\nab\n"}, 5, 80, []string{"ab"}},
		{"progress bar keeps its last state", 64, []string{"Loading 10%\rLoading 50%\rLoading 100%\nready\r\n"}, 5, 80, []string{"Loading 100%", "ready"}},
		{"long line shortened", 64, []string{strings.Repeat("x", 30) + "\n"}, 5, 10, []string{strings.Repeat("x", 10) + "…"}},
		{"shortened on a rune boundary", 64, []string{"ééééé\n"}, 5, 5, []string{"éé…"}}, // é is 2 bytes: 10 bytes cut at 5 → 4
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tb := newTailBuffer(c.max)
			for _, w := range c.writes {
				if n, err := tb.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if diff := cmp.Diff(c.want, tb.Lines(c.n, c.width)); diff != "" {
				t.Errorf("Lines (-want +got):\n%s", diff)
			}
		})
	}
}

// Whatever is written, in whatever pieces, the buffer holds exactly the last
// max bytes, and its lines are the last complete lines of the whole stream.
func FuzzTailBuffer(f *testing.F) {
	f.Add([]byte("line one\nline two\nthree"), uint8(7), uint8(3))
	f.Add([]byte("\n\n\nx\n"), uint8(1), uint8(1))
	f.Add([]byte("no newline at all, long enough"), uint8(50), uint8(4))
	f.Fuzz(func(t *testing.T, data []byte, maxB, chunk uint8) {
		limit := int(maxB)%32 + 1
		step := int(chunk)%7 + 1
		tb := newTailBuffer(limit)
		for i := 0; i < len(data); i += step {
			tb.Write(data[i:min(i+step, len(data))])
		}
		want := data[max(0, len(data)-limit):]
		if !bytes.Equal(tb.buf, want) {
			t.Fatalf("buffer %q, want the last %d bytes %q", tb.buf, limit, want)
		}
		if len(tb.buf) > limit || cap(tb.buf) > limit {
			t.Fatalf("buffer grew: len %d cap %d, limit %d", len(tb.buf), cap(tb.buf), limit)
		}
		// Every line it returns is a whole line of the stream, in order, ending the stream.
		got := tb.Lines(1000, 1<<20)
		all := strings.Split(strings.TrimRight(string(data), "\r\n \t"), "\n")
		if len(got) > len(all) {
			t.Fatalf("%d lines from a stream of %d", len(got), len(all))
		}
		tailOfAll := all[len(all)-len(got):]
		for i := range got {
			l := strings.TrimRight(tailOfAll[i], "\r")
			if j := strings.LastIndexByte(l, '\r'); j >= 0 {
				l = l[j+1:]
			}
			if got[i] != l {
				t.Fatalf("line %d = %q, want %q (lines %q)", i, got[i], l, got)
			}
		}
	})
}
