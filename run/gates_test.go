package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench-org/llmbench/report"
)

// Gate without gates says so and passes.
func TestGateWithoutGates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, report.RunFile), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if rep, err := Gate(dir, GateConfig{}, &out); err != nil || rep != nil {
		t.Fatalf("no gates: %v, %+v", err, rep)
	}
	if !strings.Contains(out.String(), "gates: none") {
		t.Errorf("output %q", out.String())
	}
}
