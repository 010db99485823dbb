package testkit

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/llmbench-org/llmbench/scenarios"
)

// ExampleFiles copies the embedded example scenarios and their data files
// to a temporary directory, as a user would have them on disk, and returns
// it.
func ExampleFiles(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	err := fs.WalkDir(scenarios.Examples(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(scenarios.Examples(), path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, path), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
