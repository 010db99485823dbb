package run

import (
	"io"
	"os"

	"golang.org/x/term"

	"github.com/llmbench-org/llmbench/report"
)

// minTextWidth is the narrowest a terminal makes the text summary: below
// it a hanging indent leaves too little room to read (docs/decisions/0050).
const minTextWidth = 60

// summaryWidth is the text summary's width on w: a terminal's columns when
// w is a terminal narrower than report.DefaultTextWidth (never below
// minTextWidth), else report.DefaultTextWidth: a wider terminal gets no
// wider lines (they read worse), and a file or a pipe gets the width the
// goldens hold (docs/decisions/0050).
func summaryWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return report.DefaultTextWidth
	}
	cols, _, err := term.GetSize(int(f.Fd()))
	if err != nil || cols <= 0 {
		return report.DefaultTextWidth
	}
	return max(minTextWidth, min(cols, report.DefaultTextWidth))
}
