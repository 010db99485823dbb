package report

import (
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/client"
)

func TestViolationsCounted(t *testing.T) {
	recs := []client.Record{
		{Violations: []client.Violation{client.ViolationChunkAfterFinish, client.ViolationUsageBeyondCap}},
		{Violations: []client.Violation{client.ViolationUsageBeyondCap}},
		{Violations: []client.Violation{"\x1b[2Jevil"}},
		{},
	}
	var counts map[string]int
	for i := range recs {
		counts = countViolations(counts, &recs[i])
	}
	want := map[string]int{"chunk_after_finish": 1, "usage_beyond_cap": 2, "other": 1}
	if len(counts) != len(want) {
		t.Fatalf("counts %v, want %v", counts, want)
	}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("%s: %d, want %d", k, counts[k], n)
		}
	}
	f, ok := violationsFinding(Health{ProtocolViolations: counts})
	if !ok || f.ID != IDProtocolViolations || f.Evidence["usage_beyond_cap_requests"] != 2 ||
		!strings.Contains(f.Verdict, "chunk_after_finish 1, usage_beyond_cap 2, other 1") {
		t.Errorf("finding %+v", f)
	}
	if _, ok := violationsFinding(Health{}); ok || violationsNote(Health{}) != "" {
		t.Error("a finding without violations")
	}
	// No record with violations: no counts at all (the summary leaves the key out).
	if c := countViolations(nil, &recs[3]); c != nil {
		t.Errorf("counts %v for a clean record", c)
	}
}
