package gates

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report"
)

// LoadRun reads any summary.json kept alone (a CI baseline) without
// panicking: it fails naming the file, or gives the run its summary names.
// Seeded with the summary of a real run directory (report/testdata/v1-run).
func FuzzLoadSummary(f *testing.F) {
	if l, err := report.Load(filepath.Join("..", "testdata", "v1-run")); err == nil {
		if b, err := json.Marshal(l.Summary()); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{"", "{}", `{"schema":"x"}`, "null", `{"schema":"` + report.SummarySchema + `","run":{"id":"r"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "summary.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		run, err := LoadRun(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %v does not name the file", err)
			}
			return
		}
		if run.ID != run.Summary.Run.ID || run.Summary.Schema != report.SummarySchema {
			t.Fatalf("run %q from a summary of run %q, schema %q", run.ID, run.Summary.Run.ID, run.Summary.Schema)
		}
	})
}
