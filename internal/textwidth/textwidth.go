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
// item. A word longer than a line is broken inside. A width below 1, or one
// that leaves no room after the indent, returns line whole.
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
	cur, curLen := lead, Len(lead)
	empty := true // cur holds no word yet
	flush := func() {
		out = append(out, strings.TrimRight(cur, " "))
		cur, curLen, empty = hang, Len(hang), true
	}
	for _, word := range strings.Fields(line) {
		wl := Len(word)
		if !empty && curLen+1+wl > width {
			flush()
		}
		for curLen+wl+boolInt(!empty) > width { // a word longer than the room: break it
			room := width - curLen - boolInt(!empty)
			r := []rune(word)
			if !empty {
				cur += " "
			}
			cur += string(r[:room])
			word, wl = string(r[room:]), len(r)-room
			flush()
		}
		if !empty {
			cur += " "
			curLen++
		}
		cur += word
		curLen += wl
		empty = false
	}
	if !empty {
		out = append(out, cur)
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
