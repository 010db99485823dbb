package run

import (
	"io/fs"
	"testing"

	"github.com/llmbench-org/llmbench/report/gates"
	"github.com/llmbench-org/llmbench/scenarios"
)

// Every threshold in the example scenarios parses.
func TestExampleScenarioGatesParse(t *testing.T) {
	t.Parallel()
	files, err := fs.Glob(scenarios.Examples(), "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		sc, err := scenarios.LoadFS(scenarios.Examples(), f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if sc.Gates == nil {
			continue
		}
		if _, err := gates.ParseAll(sc.Gates.Thresholds); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		n += len(sc.Gates.Thresholds)
	}
	if n == 0 {
		t.Error("no example scenario has gates: ci-gate.yaml should")
	}
}
