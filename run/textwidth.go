package run

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/llmbench-org/llmbench/report"
)

// CheckWidth checks a width the user asked for (--width): 0 (the
// terminal's, at most report.DefaultTextWidth) or at least minTextWidth.
func CheckWidth(cols int) error {
	if cols != 0 && cols < minTextWidth {
		return configError(fmt.Errorf("--width %d: at least %d columns (0: the terminal's, at most %d)", cols, minTextWidth, report.DefaultTextWidth))
	}
	return nil
}

// minTextWidth is the narrowest a terminal makes the text summary: below
// it a hanging indent leaves too little room to read (docs/decisions/0050).
const minTextWidth = 60

// summaryWidth is the text summary's width on w: a terminal's columns when
// w is a terminal narrower than report.DefaultTextWidth (never below
// minTextWidth), else report.DefaultTextWidth: a wider terminal gets no
// wider lines (they read worse), and a file or a pipe gets the width the
// goldens hold (docs/decisions/0050).
// A width the user asked for (--width) wins; it is at least minTextWidth
// (CheckWidth).
func summaryWidth(w io.Writer, asked int) int {
	if asked > 0 {
		return asked
	}
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
