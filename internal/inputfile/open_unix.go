//go:build unix

package inputfile

import (
	"os"
	"syscall"
)

// openNonBlocking opens path read-only without blocking: a named pipe
// swapped in after the stat would otherwise block the open until a writer
// came (Open refuses it through the open file).
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
