// Package atomicfile writes whole files atomically: a temporary file beside
// the target, fsync, rename, fsync of the directory (docs/decisions/0017).
// It is rundir's writer of every whole file in a run directory, a leaf of its
// own so that the engines, which sit below rundir, write their few whole files
// (launch's group file) the same way.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// File is a whole file being written atomically: its bytes go to a
// temporary file beside path, and only Commit puts them in place (fsync,
// rename, fsync of the directory). Until then, and after an error or Abort,
// the file at path is what it was before: a full disk while a report is
// rewritten leaves the previous summary.json whole.
type File struct {
	path string
	tmp  *os.File
	buf  *bufio.Writer
	err  error // the first failed write: Commit returns it
	done bool
}

// Create starts writing path atomically.
func Create(path string) (*File, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &File{path: path, tmp: tmp, buf: bufio.NewWriterSize(tmp, 64<<10)}, nil
}

// Write writes b to the temporary file.
func (f *File) Write(b []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.buf.Write(b)
	if err != nil {
		f.err = &pathError{path: f.path, err: err}
	}
	return n, f.err
}

// Commit puts the file in place: flushed, synced, renamed over path, the
// directory synced so the rename survives a crash. On any error the
// temporary file is removed and path keeps its old content.
func (f *File) Commit() error {
	if f.done {
		return errors.New("atomicfile: file committed or aborted already")
	}
	f.done = true
	err := f.err
	if err == nil {
		err = f.buf.Flush()
	}
	if err == nil {
		err = f.tmp.Sync()
	}
	if err == nil {
		err = f.tmp.Chmod(0o644) // CreateTemp makes 0600; results files are read by others
	}
	err = errors.Join(err, f.tmp.Close())
	if err == nil {
		err = os.Rename(f.tmp.Name(), f.path)
	}
	if err != nil {
		_ = os.Remove(f.tmp.Name())
		return wrapOnce(f.path, err)
	}
	return SyncDir(filepath.Dir(f.path))
}

// Abort drops the temporary file; path keeps its old content. It does
// nothing after Commit, so `defer f.Abort()` is safe.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	_ = f.tmp.Close()
	_ = os.Remove(f.tmp.Name())
}

// WriteFile writes data to path atomically (Create, Write, Commit).
func WriteFile(path string, data []byte) error {
	return WriteWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith writes what write writes to path atomically: a renderer streams
// straight into the temporary file, and an error from it leaves path as it
// was.
func WriteWith(path string, write func(io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return wrapOnce(path, err)
	}
	return f.Commit()
}

// SyncDir makes a rename in dir durable (a directory renamed into place
// whole, as merge does, needs it too).
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// wrapOnce names path in err unless a write of File named it already.
func wrapOnce(path string, err error) error {
	var pe *pathError
	if errors.As(err, &pe) {
		return err
	}
	return &pathError{path: path, err: err}
}

type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string { return "write " + e.path + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }
