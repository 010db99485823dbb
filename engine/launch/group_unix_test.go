//go:build unix && !linux

package launch

import (
	"errors"
	"syscall"
	"testing"
)

// processGone reports whether pid has exited (a zombie counts as running here).
func processGone(t *testing.T, pid int) bool {
	t.Helper()
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
