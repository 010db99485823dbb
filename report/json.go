package report

import (
	"encoding/json"
	"io"
)

// RenderJSON writes the Summary as indented JSON: the summary.json format.
func RenderJSON(w io.Writer, s Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}
