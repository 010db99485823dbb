package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// RenderJSON writes the Summary as indented JSON: the summary.json format.
// encoding/json escapes C0 controls itself; C1 controls and DEL inside
// strings are written as \u escapes too, so printing it is safe.
func RenderJSON(w io.Writer, s Summary) error {
	enc := json.NewEncoder(jsonControls{w})
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// jsonControls writes DEL and the C1 controls (U+0080–U+009F), which
// encoding/json leaves as they are, as JSON \u escapes: JSON text holds
// them only inside strings, where the escape means the same character.
type jsonControls struct{ w io.Writer }

func (j jsonControls) Write(b []byte) (int, error) {
	s := string(b)
	if !strings.ContainsFunc(s, func(r rune) bool { return r == 0x7f || (r >= 0x80 && r < 0xa0) }) {
		return j.w.Write(b)
	}
	var out strings.Builder
	for _, r := range s {
		if r == 0x7f || (r >= 0x80 && r < 0xa0) {
			fmt.Fprintf(&out, `\u%04x`, r)
			continue
		}
		out.WriteRune(r)
	}
	if _, err := io.WriteString(j.w, out.String()); err != nil {
		return 0, err
	}
	return len(b), nil
}
