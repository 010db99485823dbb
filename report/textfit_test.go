package report

import "strings"

// hasText reports whether text holds want with line breaks and runs of
// spaces read as one space: the text summary wraps its lines to a width
// (docs/decisions/0050), so a phrase may continue on the next, indented
// line.
func hasText(text, want string) bool {
	return strings.Contains(strings.Join(strings.Fields(text), " "), strings.Join(strings.Fields(want), " "))
}
