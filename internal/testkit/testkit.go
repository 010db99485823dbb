// Package testkit holds what the end-to-end tests of several packages (the
// command's, run's, calibrate's) share: a goroutine-safe output buffer,
// scenario files in a temporary directory, JSONL readers, and a built-in
// engine started for a test. It is imported by tests only.
package testkit

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
	"github.com/llmbench-org/llmbench/rundir"
)

// SyncBuffer is a bytes.Buffer safe for a run's goroutines and the test.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WriteScenario writes yaml as a scenario file in a temporary directory.
func WriteScenario(t testing.TB, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// ReadJSONL reads every line of a JSONL file as a T.
func ReadJSONL[T any](t testing.TB, path string) []T {
	t.Helper()
	var out []T
	if _, err := rundir.ReadJSONL(path, func(v *T) error { out = append(out, *v); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// StartSim starts a built-in engine of the tiny preset (2 ms passes) for the
// test, stopped when it ends.
func StartSim(t testing.TB, cfg sim.Config) (*sim.Engine, engine.Endpoint) {
	t.Helper()
	return StartSimWith(t, cfg, nil)
}

// StartSimWith is StartSim with the tiny preset's parameters edited by edit
// (nil: as they are).
func StartSimWith(t testing.TB, cfg sim.Config, edit func(*sim.Params)) (*sim.Engine, engine.Endpoint) {
	t.Helper()
	p, err := sim.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&p)
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
