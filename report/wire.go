package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmbench-org/llmbench/client"
)

// wireCodings are the content codings the client decodes (decision 0210);
// a record's Wire names them, layers joined by "+".
var wireCodings = []string{"gzip", "deflate", "deflate-raw", "br"}

// countWire adds the words of a record's Wire to counts (made on first
// use). A word this llmbench does not write (a newer one's, or a
// hand-edited file's: any text) counts as "other".
func countWire(counts map[string]int, r *client.Record) map[string]int {
	for _, w := range strings.Fields(r.Wire) {
		if !knownWire(w) {
			w = "other"
		}
		if counts == nil {
			counts = map[string]int{}
		}
		counts[w]++
	}
	return counts
}

func knownWire(w string) bool {
	if w == "linger" {
		return true
	}
	for _, layer := range strings.Split(w, "+") {
		if !slices.Contains(wireCodings, layer) {
			return false
		}
	}
	return true
}

// wireNote says how many responses came compressed by something on the way
// and how many connections lingered ("" when none did): both were read
// right, but each says something about the path between client and engine.
func wireNote(h Health) string {
	var parts []string
	coded, linger := 0, h.Wire["linger"]
	var codings []string
	for _, k := range slices.Sorted(maps.Keys(h.Wire)) {
		if k == "linger" {
			continue
		}
		coded += h.Wire[k]
		codings = append(codings, fmt.Sprintf("%s %d", k, h.Wire[k]))
	}
	if coded > 0 {
		parts = append(parts, fmt.Sprintf("%d responses came in a content coding although identity was asked (%s): something between client and engine compresses them; they were decoded as they arrived",
			coded, strings.Join(codings, ", ")))
	}
	if linger > 0 {
		parts = append(parts, fmt.Sprintf("%d connections stayed open after a complete stream: those requests end at their last event", linger))
	}
	return strings.Join(parts, "; ")
}
