//go:build !unix

package inputfile

import "os"

// openNonBlocking opens path read-only (named pipes do not block an open here).
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }
