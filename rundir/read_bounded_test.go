package rundir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/llmbench-org/llmbench/internal/inputfile"
)

// ReadFile refuses a file over its bound instead of reading it whole.
func TestReadFileIsBounded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), RunFile)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(inputfile.RunFileBytes + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadFile(path); err == nil {
		t.Error("ReadFile read a file over inputfile.RunFileBytes")
	}
}
