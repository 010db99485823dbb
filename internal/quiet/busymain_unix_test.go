//go:build unix

package quiet

import (
	"path/filepath"
	"testing"
)

// TestBusyMainHoldsTheLockShared: while BusyMain's lock is held a test that
// needs quiet cannot take it, another busy test can; after release the
// quiet one can.
func TestBusyMainHoldsTheLockShared(t *testing.T) {
	old := lockPath
	lockPath = filepath.Join(t.TempDir(), "quiet.lock") // not the machine's: other binaries hold that one
	t.Cleanup(func() { lockPath = old })

	release := BusyMain()
	if r, err := lock(true, 0); err == nil {
		r()
		t.Fatal("an exclusive lock was taken while BusyMain held it shared")
	}
	other, err := lock(false, 0)
	if err != nil {
		t.Fatalf("a second shared lock: %v", err)
	}
	other()
	release()
	r, err := lock(true, 0)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	r()
}
