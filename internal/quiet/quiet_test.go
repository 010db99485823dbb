package quiet

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExclusiveWaitsForShared checks the protocol on a private lock file:
// a quiet holder waits for loaders and keeps new ones out, and loaders share.
func TestExclusiveWaitsForShared(t *testing.T) {
	lockPath = filepath.Join(t.TempDir(), "quiet.lock")

	loadA, err := lock(false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	loadB, err := lock(false, time.Second)
	if err != nil {
		t.Fatalf("two loaders must share the lock: %v", err)
	}
	if _, err := lock(true, 100*time.Millisecond); err == nil || !strings.Contains(err.Error(), "still held") {
		t.Fatalf("a quiet holder got the lock beside loaders (err %v)", err)
	}
	loadA()
	loadB()
	quietRelease, err := lock(true, time.Second)
	if err != nil {
		t.Fatalf("no loader left, yet: %v", err)
	}
	if _, err := lock(false, 100*time.Millisecond); err == nil {
		t.Fatal("a loader started while a quiet holder held the lock")
	}
	quietRelease()
	if release, err := lock(false, time.Second); err != nil {
		t.Fatalf("after the quiet holder: %v", err)
	} else {
		release()
	}
}
