//go:build unix

package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmbench-org/llmbench/internal/inputfile"
)

// A scenario naming something that is not a regular file as a data file —
// a named pipe nobody writes to, /dev/zero, a directory — or a file above
// the bound gets an error naming it at once: validation never blocks in an
// open and never reads gigabytes.
func TestDataFilesBoundedBeforeRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "prompts.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	huge := filepath.Join(dir, "huge.jsonl")
	if f, err := os.Create(huge); err != nil {
		t.Fatal(err)
	} else {
		// Sparse: the size is over the bound without a byte written.
		if err := f.Truncate(inputfile.DataBytes + 1); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	for _, tc := range []struct{ name, path, want string }{
		{"fifo", fifo, "a named pipe (FIFO)"},
		{"device", "/dev/zero", "a device"},
		{"directory", dir, "a directory"},
		{"over the bound", huge, "over the 2147483648-byte bound on a data file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.yaml")
			yaml := "name: s\nengine: {kind: sim}\nworkload:\n  concurrency: 1\n  requests: 2\n  dataset: {type: jsonl, path: " + tc.path + "}\n"
			if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := Load(path); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
					t.Errorf("Load = %v, want an error naming %s as %q", err, tc.path, tc.want)
				}
			case <-time.After(20 * time.Second): // a bound on a hang, not a timing: Load takes milliseconds
				t.Fatal("Load blocked on the data file")
			}
			if f, err := (Scenario{}).Open(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open = %v, want %q", err, tc.want)
				if err == nil {
					f.Close()
				}
			}
		})
	}
	// The scenario file itself: a pipe is refused, not waited on.
	if _, err := Load(fifo); err == nil || !strings.Contains(err.Error(), "scenario file") || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("Load(a fifo) = %v, want it refused as a scenario file", err)
	}
}
