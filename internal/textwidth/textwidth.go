// Package textwidth fits plain text to a terminal's columns: a line cut to
// a width with an ellipsis, a paragraph wrapped with a hanging indent. The
// text summary and the plain progress lines both fit their lines with it
// (docs/decisions/0050).
//
// A column is a rune: llmbench's own words use only single-column runes
// (—, –, †, ∞, Δ, …); a wide rune in text from outside (a model id) may
// overrun by its extra column, which the ordering of content never depends
// on.
package textwidth

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis ends a cut line.
const Ellipsis = "…"

// Len is s's width in columns.
func Len(s string) int { return utf8.RuneCountInString(s) }

// Cut is s in at most width columns: s itself when it fits, else its first
// width-1 runes and an ellipsis. A width below 1 leaves s whole.
func Cut(s string, width int) string {
	if width < 1 || Len(s) <= width {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:width-1]), " ") + Ellipsis
}

// Wrap breaks line into lines of at most width columns at spaces. The
// first keeps line's own leading spaces; each continuation is indented two
// columns deeper (a hanging indent), so a wrapped paragraph reads as one
// item. It breaks after a clause (a word ending in , ; or :) when one ends
// in the line's last half, so a figure and its words stay together
// ("client CPU 95% of 2 cores"). A word longer than a line is broken
// inside. A width below 1, or one that leaves no room after the indent,
// returns line whole.
func Wrap(line string, width int) []string {
	if width < 1 || Len(line) <= width {
		return []string{line}
	}
	lead := line[:len(line)-len(strings.TrimLeft(line, " "))]
	hang := lead + "  "
	if Len(hang) >= width-8 { // too deep to leave a readable column: do not wrap
		return []string{line}
	}
	var out []string
	indent := lead
	var cur []string // the words of the line being filled
	size := func(words []string) int {
		n := Len(indent)
		for i, w := range words {
			n += Len(w)
			if i > 0 {
				n++
			}
		}
		return n
	}
	emit := func(words []string) {
		out = append(out, indent+strings.Join(words, " "))
		indent = hang
	}
	for _, word := range strings.Fields(line) {
		if len(cur) > 0 && size(append(cur, word)) > width {
			keep := clauseEnd(cur, size, width)
			emit(cur[:keep])
			cur = append([]string(nil), cur[keep:]...)
			if len(cur) > 0 && size(append(cur, word)) > width {
				emit(cur)
				cur = nil
			}
		}
		for len(cur) == 0 && size([]string{word}) > width { // longer than a line: break it
			r := []rune(word)
			room := width - Len(indent)
			emit([]string{string(r[:room])})
			word = string(r[room:])
		}
		cur = append(cur, word)
	}
	if len(cur) > 0 {
		emit(cur)
	}
	return out
}

// clauseEnd is how many of words to keep on a full line: up to the last
// word that ends a clause, if that ends past half the width; all of them
// otherwise.
func clauseEnd(words []string, size func([]string) int, width int) int {
	for i := len(words) - 1; i > 0; i-- {
		if size(words[:i]) <= width/2 {
			break
		}
		if strings.ContainsAny(words[i-1][len(words[i-1])-1:], ",;:") {
			return i
		}
	}
	return len(words)
}
