package rundir

import (
	"io"

	"github.com/llmbench-org/llmbench/rundir/atomicfile"
)

// File is a whole file of a run directory being written atomically
// (atomicfile.File: temp file, fsync, rename, fsync of the directory).
type File = atomicfile.File

// Create starts writing path atomically.
func Create(path string) (*File, error) { return atomicfile.Create(path) }

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error { return atomicfile.WriteFile(path, data) }

// WriteWith writes what write writes to path atomically; an error from it
// leaves path as it was.
func WriteWith(path string, write func(io.Writer) error) error {
	return atomicfile.WriteWith(path, write)
}
