package comparison

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/rundir"
)

// compare reads a run's run.json and scenario.yaml as plain data: any file
// either fails naming itself or reads (aliases and anchors included),
// without a panic. Seeded with a real run directory's files.
func FuzzReadRunFiles(f *testing.F) {
	real := filepath.Join("..", "testdata", "v1-run")
	for _, name := range []string{rundir.ScenarioFile, rundir.RunFile} {
		if b, err := os.ReadFile(filepath.Join(real, name)); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{"", "a: &a [*a, *a]\nb: *a\n", "- 1\n", "{", "null", "a: !!binary AAAA\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		for _, name := range []string{rundir.ScenarioFile, rundir.RunFile} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := readScenario(filepath.Join(dir, rundir.ScenarioFile)); err != nil && !strings.Contains(err.Error(), rundir.ScenarioFile) {
			t.Fatalf("error %v does not name %s", err, rundir.ScenarioFile)
		}
		if _, err := readMeta(filepath.Join(dir, rundir.RunFile)); err != nil && !strings.Contains(err.Error(), rundir.RunFile) {
			t.Fatalf("error %v does not name %s", err, rundir.RunFile)
		}
	})
}
