package report

import (
	"strings"

	"github.com/llmbench-org/llmbench/internal/textwidth"
)

// textTable is a table for the text summary: rows of cells, the first
// keyCols of which name the row. It is laid out to a width by fitTable.
type textTable struct {
	rows    [][]string
	keyCols int
}

func (t *textTable) add(cells ...string) { t.rows = append(t.rows, cells) }

// tableGap is the space between two columns.
const tableGap = 2

// fitTable lays t out in columns within width: whole when it fits; else
// its columns in blocks, one under the other, each repeating the key
// columns, so a figure is never cut and a reader still finds its row
// (docs/decisions/0050). A width below 1 is no limit. Trailing spaces are
// trimmed.
func fitTable(t textTable, width int) []string {
	ncol := 0
	for _, r := range t.rows {
		ncol = max(ncol, len(r))
	}
	widths := make([]int, ncol)
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], textwidth.Len(c))
		}
	}
	key := min(t.keyCols, ncol)
	span := func(cols []int) int {
		n := 0
		for _, c := range cols {
			n += widths[c] + tableGap
		}
		return n - tableGap
	}
	var keys []int
	for i := range key {
		keys = append(keys, i)
	}
	blocks := columnBlocks(keys, key, ncol, func(cols []int) bool { return width <= 0 || span(cols) <= width })
	var out []string
	for bi, cols := range blocks {
		if bi > 0 {
			out = append(out, "")
		}
		for _, r := range t.rows {
			var b strings.Builder
			for j, c := range cols {
				cell := ""
				if c < len(r) {
					cell = r[c]
				}
				b.WriteString(cell)
				if j < len(cols)-1 {
					b.WriteString(strings.Repeat(" ", widths[c]-textwidth.Len(cell)+tableGap))
				}
			}
			out = append(out, strings.TrimRight(b.String(), " "))
		}
	}
	return out
}

// columnBlocks splits the columns after the keys into as few blocks as fit
// (each with the keys in front), and among those splits the one with the
// columns shared out evenly when that fits too: two blocks of three
// columns read better than one of five and one of one.
func columnBlocks(keys []int, key, ncol int, fits func([]int) bool) [][]int {
	greedy := [][]int{}
	cur := append([]int(nil), keys...)
	for c := key; c < ncol; c++ {
		if len(cur) > key && !fits(append(append([]int(nil), cur...), c)) {
			greedy = append(greedy, cur)
			cur = append([]int(nil), keys...)
		}
		cur = append(cur, c)
	}
	greedy = append(greedy, cur)
	k, m := len(greedy), ncol-key
	if k < 2 {
		return greedy
	}
	per := (m + k - 1) / k
	var even [][]int
	for c := key; c < ncol; c += per {
		b := append([]int(nil), keys...)
		for j := c; j < min(c+per, ncol); j++ {
			b = append(b, j)
		}
		if !fits(b) {
			return greedy
		}
		even = append(even, b)
	}
	return even
}
