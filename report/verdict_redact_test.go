package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/redact"
)

// The reports' own words are not secrets: no finding's verdict reads as a
// key: value pair to Redact (a verdict once said "first token: nothing to
// decompose", and "nothing" came out REDACTED).
func TestFindingsSurviveRedaction(t *testing.T) {
	t.Parallel()
	meta, recs, rows := fixedRun()
	_, realRecs, realRows := realEngineRun()
	noFirst := slices.Clone(recs)
	for i := range noFirst {
		noFirst[i].FirstToken, noFirst[i].FirstContent, noFirst[i].Chunks = 0, 0, nil
		noFirst[i].ErrorClass, noFirst[i].Error = client.ErrTimeout, "request timeout"
	}
	for name, run := range map[string][]client.Record{"fixed": recs, "real engine": realRecs, "no first token": noFirst} {
		r := rows
		if name == "real engine" {
			r = realRows
		}
		s := Compute(meta, run, r, nil, 0)
		if len(s.Findings) == 0 {
			t.Fatalf("%s: no findings to check", name)
		}
		// Compute redacts what it writes: a verdict of no secret must come
		// out whole.
		for _, f := range s.Findings {
			if strings.Contains(f.Verdict, redact.Marker) {
				t.Errorf("%s: %s's verdict lost words to redaction: %s", name, f.ID, f.Verdict)
			}
		}
	}
}
