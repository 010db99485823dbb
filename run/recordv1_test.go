package run

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/internal/testkit"
	"github.com/llmbench-org/llmbench/report"
)

// TestV1RecordsFinalizeAsV2: a run directory written before record format
// v2 finalizes to the same summary.json whether its records are v1, v2, or
// both mixed in one file (an old file appended to by a new llmbench).
// report's TestV1RunDirectoryReads checks the records read alike; finalizing
// is run's, so this half lives here.
func TestV1RecordsFinalizeAsV2(t *testing.T) {
	t.Parallel()
	v1Run := filepath.Join("..", "report", "testdata", "v1-run")
	raw, err := os.ReadFile(filepath.Join(v1Run, report.RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	v1Lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	records := testkit.ReadJSONL[client.Record](t, filepath.Join(v1Run, report.RequestsFile))
	if len(records) != len(v1Lines) || len(records) < 100 {
		t.Fatalf("read %d records from %d lines", len(records), len(v1Lines))
	}
	summaries := map[string][]byte{}
	for name, v2 := range map[string]func(int) bool{
		"v1":    func(int) bool { return false },
		"v2":    func(int) bool { return true },
		"mixed": func(i int) bool { return i%3 == 1 },
	} {
		dir := testkit.CopyDir(t, v1Run)
		var b []byte
		for i := range records {
			if v2(i) {
				b = records[i].AppendJSON(b)
			} else {
				b = append(b, v1Lines[i]...)
			}
			b = append(b, '\n')
		}
		if err := os.WriteFile(filepath.Join(dir, report.RequestsFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		fin, err := Finalize(dir, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fin.Summary.Health.Records != len(records) {
			t.Fatalf("%s: summary of %d records, want %d", name, fin.Summary.Health.Records, len(records))
		}
		if summaries[name], err = os.ReadFile(filepath.Join(dir, report.SummaryFile)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"v2", "mixed"} {
		if d := cmp.Diff(string(summaries["v1"]), string(summaries[name])); d != "" {
			t.Errorf("summary.json of the %s records differs from v1's:\n%s", name, d)
		}
	}
}
