package realtest

import (
	"fmt"
	"syscall"
	"testing"
)

// TinyDisk mounts a tmpfs of size bytes on a new temporary directory and
// returns it, unmounted when the test ends: a real file system that runs
// out of space (ENOSPC) where a test wants it to. Mounting needs root (or
// CAP_SYS_ADMIN): without it the test is skipped, or fails under
// LLMBENCH_REQUIRE_REAL=1.
func TinyDisk(t testing.TB, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		Missing(t, fmt.Sprintf("cannot mount a %d-byte tmpfs on %s (needs root or CAP_SYS_ADMIN): %v", size, dir, err))
		return ""
	}
	// Registered after TempDir's own cleanup, so it runs first: the
	// directory is unmounted before it is removed.
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}
