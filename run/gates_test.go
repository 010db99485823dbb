package run

import (
	"errors"
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

// A run directory whose files do not load fails its gates (exit 3 at the
// command line), naming why, rather than failing the tool.
func TestGateOfARunThatDoesNotLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, report.RunFile), []byte("{torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	_, err := Gate(dir, GateConfig{Thresholds: []string{"client.ttft.p99 < 1s"}}, &out)
	var gf *GatesFailed
	if !errors.As(err, &gf) || gf.Unevaluable != 1 || !strings.Contains(err.Error(), "load "+dir) {
		t.Errorf("error %v, want the gates failed as unevaluable, naming the directory", err)
	}
}
