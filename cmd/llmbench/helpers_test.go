package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/engine"
	"github.com/llmbench-org/llmbench/engine/sim"

	"github.com/llmbench-org/llmbench/report"
)

// syncBuffer is a bytes.Buffer safe for the progress goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testIO(sigs <-chan os.Signal) (*cliIO, *syncBuffer, *syncBuffer) {
	out, errb := &syncBuffer{}, &syncBuffer{}
	return &cliIO{stdout: out, stderr: errb, signals: sigs, getenv: func(string) string { return "" }, self: testBinary(), selfEnv: []string{envAsCLI + "=1"}}, out, errb
}

func writeScenario(t testing.TB, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readJSONL[T any](t testing.TB, path string) []T {
	t.Helper()
	var out []T
	if _, err := report.ReadJSONL(path, func(v *T) error { out = append(out, *v); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// startSim starts a built-in engine of the tiny preset (2 ms passes) for a
// scenario of kind external to point at.
func startSim(t *testing.T, cfg sim.Config) (*sim.Engine, engine.Endpoint) {
	t.Helper()
	p, err := sim.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Params = p
	e, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := e.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	})
	return e, ep
}

// testBinary runs this test binary, which acts as llmbench when envAsCLI is set.
func testBinary() []string {
	self, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return []string{self}
}
