//go:build unix

package inputfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What is not a regular file is refused before it is read, and Open never
// blocks on it: a named pipe nobody writes to, a device that never ends (or
// a symlink to one), a directory, a socket. The error names the file, its
// kind and the kind of file llmbench wanted.
func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "data.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	link := filepath.Join(dir, "zero.jsonl")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	if fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0); err == nil {
		if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
			sock = ""
		}
		defer syscall.Close(fd)
	}
	cases := []struct{ path, kind string }{
		{fifo, "a named pipe (FIFO)"},
		{"/dev/zero", "a device"},
		{"/dev/urandom", "a device"},
		{link, "a device"},
		{dir, "a directory"},
		{sock, "a socket"},
	}
	for _, tc := range cases {
		if tc.path == "" {
			continue
		}
		for _, k := range []Kind{Data, Scenario, RunFile, RunLines} {
			done := make(chan error, 1)
			go func() {
				f, err := Open(tc.path, k)
				if err == nil {
					f.Close()
				}
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second): // a bound on a hang, not a timing: Open takes microseconds
				t.Fatalf("Open(%s) blocked", tc.path)
			}
			var nr *NotRegularError
			want := k.What + " " + tc.path + " is " + tc.kind + ": llmbench reads a " + k.What + " only from a regular file (copy it to one)"
			if !errors.As(err, &nr) || err.Error() != want {
				t.Errorf("Open(%s, %s) = %v, want %q", tc.path, k.What, err, want)
			}
		}
		if _, err := ReadAll(tc.path, Data); err == nil || !strings.Contains(err.Error(), tc.kind) {
			t.Errorf("ReadAll(%s) = %v", tc.path, err)
		}
		if err := Check(tc.path, Data); err == nil || !strings.Contains(err.Error(), tc.kind) {
			t.Errorf("Check(%s) = %v", tc.path, err)
		}
	}
}

// A file whose size is over its kind's bound is refused from its stat,
// before a byte is read (a sparse file: the size without the disk).
func TestOpenRefusesAFileOverItsBound(t *testing.T) {
	t.Parallel()
	for _, k := range []Kind{Scenario, Data, RunFile} {
		path := filepath.Join(t.TempDir(), "big")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(k.MaxBytes + 1); err != nil {
			t.Fatal(err)
		}
		f.Close()
		_, err = Open(path, k)
		var be *BoundError
		if !errors.As(err, &be) || be.Size != k.MaxBytes+1 || be.Line != 0 {
			t.Fatalf("Open(a %d-byte %s) = %v, want a *BoundError with its size", k.MaxBytes+1, k.What, err)
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "bound on a "+k.What) {
			t.Errorf("%v: want the file and the bound named", err)
		}
		// At the bound it opens.
		if err := os.Truncate(path, k.MaxBytes); err != nil {
			t.Fatal(err)
		}
		if err := Check(path, k); err != nil {
			t.Errorf("a %s of exactly its bound: %v", k.What, err)
		}
	}
	// A line-read kind has no bound on the whole file.
	path := filepath.Join(t.TempDir(), "requests.jsonl")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 3<<30); err != nil {
		t.Fatal(err)
	}
	if err := Check(path, RunLines); err != nil {
		t.Errorf("a 3 GiB %s: %v (it is read line by line, unbounded as a whole)", RunLines.What, err)
	}
}
