// Package quiet lets a timing-sensitive test ask the other test binaries of
// the same `go test ./...` for a quiet machine. go test runs several
// packages' binaries at once; a test that checks llmbench's timestamps
// against the built-in engine's to the millisecond cannot tell llmbench's
// error from a browser or a real-time engine test starving its goroutines.
//
// The protocol is an advisory file lock in the temporary directory: tests
// that load the machine (Chromium, Prometheus, real-time engine runs) hold
// it shared while they run; a test that needs quiet holds it exclusive, so it
// runs while none of them does and they wait for it. It changes when tests
// run, never what they assert. It is imported by tests only.
package quiet

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// lockPath is shared by every test binary of every checkout on the machine:
// two clones tested at once should not starve each other either.
var lockPath = filepath.Join(os.TempDir(), "llmbench-test-quiet.lock")

// Need holds the machine quiet for the rest of t: it waits until no test
// that loads the machine is running (at most maxWait, then it goes on and
// says so) and keeps them from starting until t ends.
func Need(t testing.TB, maxWait time.Duration) {
	t.Helper()
	start := time.Now()
	release, err := lock(true, maxWait)
	if err != nil {
		t.Logf("quiet: %v; running beside other tests", err)
		return
	}
	if waited := time.Since(start); waited > 100*time.Millisecond {
		t.Logf("quiet: waited %v for tests that load the machine to finish", waited.Round(time.Millisecond))
	}
	t.Cleanup(release)
}

// Busy marks t as a test that loads the machine, for the rest of t: it waits
// while a test that needs quiet runs.
func Busy(t testing.TB) {
	t.Helper()
	release, err := lock(false, 5*time.Minute)
	if err != nil {
		t.Logf("quiet: %v", err)
		return
	}
	t.Cleanup(release)
}
