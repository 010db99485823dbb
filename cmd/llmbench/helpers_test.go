package main

import (
	"os"
	"testing"

	"github.com/llmbench-org/llmbench/engine"
	"github.com/llmbench-org/llmbench/engine/sim"
	"github.com/llmbench-org/llmbench/internal/testkit"
)

// Shared with run's tests (internal/testkit).
type syncBuffer = testkit.SyncBuffer

func writeScenario(t testing.TB, yaml string) string { return testkit.WriteScenario(t, yaml) }

func readJSONL[T any](t testing.TB, path string) []T { return testkit.ReadJSONL[T](t, path) }

func startSim(t *testing.T, cfg sim.Config) (*sim.Engine, engine.Endpoint) {
	return testkit.StartSim(t, cfg)
}

func testIO(sigs <-chan os.Signal) (*cliIO, *syncBuffer, *syncBuffer) {
	out, errb := &syncBuffer{}, &syncBuffer{}
	return &cliIO{stdout: out, stderr: errb, signals: sigs, getenv: func(string) string { return "" }, self: testBinary(), selfEnv: []string{envAsCLI + "=1"}}, out, errb
}

// testBinary runs this test binary, which acts as llmbench when envAsCLI is set.
func testBinary() []string {
	self, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return []string{self}
}
