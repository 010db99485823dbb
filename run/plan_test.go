package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/internal/testkit"
)

// TestPlanIsByteIdentical prints the plan of every example twice, in text
// and JSON, and requires identical output, the JSON plan to decode with the
// requests it promised, and the text plan to hold its tables and limits.
func TestPlanIsByteIdentical(t *testing.T) {
	t.Parallel()
	dir := testkit.ExampleFiles(t)
	names, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(names) < 7 {
		t.Fatalf("%d examples", len(names))
	}
	for _, path := range names {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			shown := 0 // requests the JSON plan shows: 20, or fewer when the first phase sends fewer
			for _, asJSON := range []bool{true, false} {
				print := func() string {
					sc, plan, err := Load(path, nil)
					if err != nil {
						t.Fatal(err)
					}
					var b bytes.Buffer
					if err := WritePlan(&b, sc, plan, 20, asJSON); err != nil {
						t.Fatalf("json %v: %v", asJSON, err)
					}
					return b.String()
				}
				a, b := print(), print()
				if a != b {
					t.Errorf("json %v: two different plans:\n%s\n---\n%s", asJSON, a, b)
				}
				if asJSON {
					var v PlanJSON
					if err := json.Unmarshal([]byte(a), &v); err != nil || len(v.Requests) == 0 || len(v.Requests) > 20 || len(v.Summary.Phases) == 0 {
						t.Fatalf("JSON plan: %v (%d requests)", err, len(v.Requests))
					}
					if first := v.Summary.Phases[0]; len(v.Requests) < 20 && first.Requests != len(v.Requests) {
						t.Errorf("JSON plan shows %d requests; the first phase %+v sends more", len(v.Requests), first)
					}
					shown = len(v.Requests)
				} else if !strings.Contains(a, "PHASE") || !strings.Contains(a, fmt.Sprintf("first %d requests", shown)) ||
					!strings.Contains(a, "request timeout ") || !strings.Contains(a, "stops early ") {
					t.Errorf("text plan lacks its tables:\n%s", a)
				}
			}
		})
	}
}

// The pieces of the plan's text table, one case each.
func TestPlanCells(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ got, want string }{
		{quotedExcerpt("short", 48), `"short"`},
		{quotedExcerpt("héllo world", 5), `"héllo"…`},
		{yesNo(true) + yesNo(false), "yesno"},
		{capNote(""), ""},
		{capNote("64 in flight"), "; cap 64 in flight"},
		{orNever(""), "never"},
		{orNever("after 5 failures"), "after 5 failures"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
