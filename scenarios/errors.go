package scenarios

import (
	"fmt"
	"slices"
	"strings"
)

// Error is one problem in a scenario file, at the position of the node that
// carries it (for a missing field: the mapping that should hold it).
type Error struct {
	File   string
	Line   int
	Column int
	Field  string // dotted path such as "workload.prompt_tokens.min"; "" for the file as a whole
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem found in one scenario file, in file order.
// Load and Parse return it (as error) so a user fixes the file in one pass.
type ErrorList []*Error

func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// sorted orders the list by position, keeping the order of errors at the same place.
func (l ErrorList) sorted() ErrorList {
	slices.SortStableFunc(l, func(a, b *Error) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
	return l
}
