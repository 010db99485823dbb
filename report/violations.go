package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report/reconcile"
)

// IDProtocolViolations is the finding that counts the responses that broke
// the protocol (client.Violation): what they concern was flagged on their
// records and not used.
const IDProtocolViolations = "protocol_violations"

// countViolations adds a record's violations to counts (made on first use):
// a kind this llmbench does not know (a newer one's, or a hand-edited
// file's: any text) counts as "other".
func countViolations(counts map[string]int, r *client.Record) map[string]int {
	for _, v := range r.Violations {
		if counts == nil {
			counts = map[string]int{}
		}
		if !slices.Contains(client.Violations(), v) {
			v = "other"
		}
		counts[string(v)]++
	}
	return counts
}

// violationsNote says how many requests broke the protocol, per kind ("" when
// none did).
func violationsNote(h Health) string {
	if len(h.ProtocolViolations) == 0 {
		return ""
	}
	kinds := make([]string, 0, len(h.ProtocolViolations))
	for _, v := range client.Violations() {
		if h.ProtocolViolations[string(v)] > 0 {
			kinds = append(kinds, string(v))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(h.ProtocolViolations)) {
		if !slices.Contains(kinds, k) { // "other"
			kinds = append(kinds, k)
		}
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, h.ProtocolViolations[k])
	}
	return "responses broke the protocol (requests per kind: " + strings.Join(parts, ", ") +
		"): flagged on their records and not used (token counts from the chunks, output after a finish_reason left out of the timeline)"
}

// violationsFinding is the finding of violationsNote, with the counts as
// evidence; ok is false when no response broke the protocol.
func violationsFinding(h Health) (f Finding, ok bool) {
	note := violationsNote(h)
	if note == "" {
		return Finding{}, false
	}
	f = Finding{ID: IDProtocolViolations, Severity: reconcile.Warn, Verdict: note, Evidence: map[string]float64{}}
	for k, n := range h.ProtocolViolations {
		f.Evidence[k+"_requests"] = float64(n)
	}
	return f, true
}
