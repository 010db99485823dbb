package textwidth

import (
	"strings"
	"testing"
)

func TestCut(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven runes", 10, "eleven ru…"},
		{"a b c d e f", 4, "a b…"}, // the space before the cut goes
		{"ππππππ", 4, "πππ…"},      // runes, not bytes
		{"whole", 0, "whole"},      // no width: whole
		{"", 5, ""},
	} {
		if got := Cut(c.in, c.width); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
		if c.width > 0 && Len(Cut(c.in, c.width)) > c.width {
			t.Errorf("Cut(%q, %d) is %d wide", c.in, c.width, Len(Cut(c.in, c.width)))
		}
	}
}

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  []string
	}{
		{"fits", 20, []string{"fits"}},
		{"one two three four five six", 14, []string{"one two three", "  four five", "  six"}},
		{"  indented words that wrap here", 16, []string{"  indented words", "    that wrap", "    here"}},
		{"abcdefghijklmnopqrstuvwxyz tail", 12, []string{"abcdefghijkl", "  mnopqrstuv", "  wxyz tail"}},
		{"x " + strings.Repeat("y", 30), 12, []string{"x", "  yyyyyyyyyy", "  yyyyyyyyyy", "  yyyyyyyyyy"}}, // a long word starts its own line
		{"one two", 0, []string{"one two"}},
		// A clause ending past half the line is where it breaks.
		{"health: lag 1 ms, client CPU 95% of 2 cores", 30, []string{"health: lag 1 ms,", "  client CPU 95% of 2 cores"}},
		// One ending before half is not: the line is filled.
		{"a: bbbbbbbb cccccccc dddddddd eeee", 24, []string{"a: bbbbbbbb cccccccc", "  dddddddd eeee"}},
	} {
		got := Wrap(c.in, c.width)
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("Wrap(%q, %d) =\n%q\nwant\n%q", c.in, c.width, got, c.want)
		}
		for _, l := range got {
			if c.width > 0 && Len(l) > c.width {
				t.Errorf("Wrap(%q, %d): line %q is %d wide", c.in, c.width, l, Len(l))
			}
		}
		// No word is lost: the words, joined, are the input's.
		if strings.Join(strings.Fields(strings.Join(got, "")), "") != strings.Join(strings.Fields(c.in), "") {
			t.Errorf("Wrap(%q, %d) lost text: %q", c.in, c.width, got)
		}
	}
}
