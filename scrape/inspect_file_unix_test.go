//go:build unix

package scrape

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// `llmbench inspect FILE` on what is not a regular file (a named pipe
// nobody writes to, a device, a directory) is refused at once, naming it;
// it never blocks in the open.
func TestInspectRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "metrics.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	link := filepath.Join(dir, "metrics.txt")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{fifo: "a named pipe (FIFO)", link: "a device", dir: "a directory"} {
		done := make(chan error, 1)
		go func() { _, err := Inspect(context.Background(), path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), path+" is "+kind) {
				t.Errorf("Inspect(%s) = %v, want it refused as %s", path, err, kind)
			}
		case <-time.After(20 * time.Second): // a bound on a hang, not a timing
			t.Fatalf("Inspect(%s) blocked", path)
		}
	}
}
