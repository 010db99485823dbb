// Package inputfile reads the files llmbench is given — scenario files,
// datasets, traces, length files, the files of a run directory — bounded
// before a byte is read: it refuses what is not a regular file (a named
// pipe blocks the open until someone writes, a device never ends), a file
// larger than its kind's bound, and a line longer than its kind's line
// bound, each error naming the bound, the file and the line. It is the one
// owner of those bounds: every reader of an outside file goes through it.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// The bounds, each in one place. A whole file read into memory has a size
// bound; a file read line by line (a dataset, requests.jsonl) has a line
// bound and, where its size says nothing useful about a run's size, none on
// the whole.
const (
	// ScenarioBytes bounds a scenario YAML file: hand-written, kilobytes.
	ScenarioBytes = 16 << 20
	// DataBytes bounds a dataset, trace or length file. The largest public
	// prompt sets (ShareGPT's 673 MB of JSON) fit well inside it.
	DataBytes = 2 << 30
	// DataLineBytes bounds one line (or one JSON record, one CSV record) of
	// a data file: a prompt of a few million tokens.
	DataLineBytes = 64 << 20
	// RunFileBytes bounds a file llmbench wrote and reads whole: a run
	// directory's run.json, summary.json, scenario.yaml, a trial set's
	// trials.json, a noise file.
	RunFileBytes = 256 << 20
	// RunLineBytes bounds one line of a run directory's JSONL files
	// (requests.jsonl, scrapes.jsonl, the trace log): a record with every
	// chunk of a long answer is a few MB.
	RunLineBytes = 256 << 20
	// TraceLineBytes bounds one line of an engine's trace log (a request's
	// lifecycle events, one a line: a few hundred bytes each).
	TraceLineBytes = 4 << 20
)

// Kind is a kind of file and its bounds.
type Kind struct {
	What     string // as messages name it: "data file"
	MaxBytes int64  // the whole file; 0: not bounded (read as a stream of lines)
	MaxLine  int    // one line; 0: the file is not read by lines
}

// The kinds of file llmbench reads.
var (
	Scenario = Kind{What: "scenario file", MaxBytes: ScenarioBytes}
	Data     = Kind{What: "data file", MaxBytes: DataBytes, MaxLine: DataLineBytes}
	RunFile  = Kind{What: "result file", MaxBytes: RunFileBytes}
	RunLines = Kind{What: "run-directory JSONL file", MaxLine: RunLineBytes}
	TraceLog = Kind{What: "trace log", MaxLine: TraceLineBytes}
	// RequestExport is SGLang's per-request metrics file
	// (--export-metrics-to-file): a line carries the request's parameters,
	// its prompt among them, so it is bounded as a data line.
	RequestExport = Kind{What: "SGLang request-metrics file", MaxLine: DataLineBytes}
)

// BoundError is a bound hit: the file (and line) and which bound.
type BoundError struct {
	Path string
	Line int // the line that is too long, or where the record that is starts (0: the whole file is)
	// Record: a record (a JSON array's element, a CSV record) is too
	// long, not a line.
	Record bool
	Size   int64 // the file's size when a stat told it (0: found while reading)
	Kind   Kind
}

func (e *BoundError) Error() string {
	switch {
	case e.Line > 0 && e.Record:
		return fmt.Sprintf("%s:%d: record longer than %s (the bound on one line or record of a %s)", e.Path, e.Line, size(int64(e.Kind.MaxLine)), e.Kind.What)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: line longer than %s (the bound on one line of a %s)", e.Path, e.Line, size(int64(e.Kind.MaxLine)), e.Kind.What)
	case e.Size > 0:
		return fmt.Sprintf("%s %s is %d bytes, over the %d-byte bound on a %s", e.Kind.What, e.Path, e.Size, e.Kind.MaxBytes, e.Kind.What)
	}
	return fmt.Sprintf("%s %s grew past the %d-byte bound on a %s while it was read", e.Kind.What, e.Path, e.Kind.MaxBytes, e.Kind.What)
}

// size words a bound in MiB when it is whole MiB.
func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// NotRegularError is a path that is not a regular file. There is no way to
// ask llmbench to read one: a stream of unknown length cannot be checked
// before it is read, nor re-read; the message says to copy it to a file.
type NotRegularError struct {
	Path     string
	Kind     Kind
	FileKind string // "a named pipe (FIFO)", "a device", ...
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s %s is %s: llmbench reads a %s only from a regular file (copy it to one)", e.Kind.What, e.Path, e.FileKind, e.Kind.What)
}

// File is an open regular file whose reads stop at its kind's size bound
// with a *BoundError.
type File struct {
	f    *os.File
	r    io.Reader
	path string
}

// Open opens the regular file at path for reading, refusing what is not a
// regular file and a file over k.MaxBytes. The open never blocks: what
// path names is checked before it is opened, and again through the open
// file (it may have been replaced in between).
func Open(path string, k Kind) (*File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := check(path, k, st); err != nil {
		return nil, err
	}
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, err
	}
	if st, err = f.Stat(); err == nil {
		err = check(path, k, st)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{f: f, r: Bound(f, path, k), path: path}, nil
}

func (f *File) Read(p []byte) (int, error) { return f.r.Read(p) }

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Size is the file's size when it was opened.
func (f *File) Size() int64 {
	if st, err := f.f.Stat(); err == nil {
		return st.Size()
	}
	return 0
}

// ReadAll reads the regular file at path whole, within k.MaxBytes.
func ReadAll(path string, k Kind) ([]byte, error) {
	f, err := Open(path, k)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, readError(path, err)
	}
	return b, nil
}

// Check says whether path could be opened as a file of kind k, without
// reading it (validation).
func Check(path string, k Kind) error {
	f, err := Open(path, k)
	if err != nil {
		return err
	}
	return f.Close()
}

// readError names the file in a read error, unless the error names it.
func readError(path string, err error) error {
	var be *BoundError
	if errors.As(err, &be) {
		return err
	}
	return fmt.Errorf("read %s: %w", path, err)
}

// check refuses, from a stat, what is not a regular file or is over the bound.
func check(path string, k Kind, st fs.FileInfo) error {
	if m := st.Mode(); !m.IsRegular() {
		return &NotRegularError{Path: path, Kind: k, FileKind: fileKind(m)}
	}
	if k.MaxBytes > 0 && st.Size() > k.MaxBytes {
		return &BoundError{Path: path, Size: st.Size(), Kind: k}
	}
	return nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// Bound stops r at k.MaxBytes (when k has one) with a *BoundError naming
// path: for a file that grows while it is read, or one from an fs.FS.
func Bound(r io.Reader, path string, k Kind) io.Reader {
	if k.MaxBytes <= 0 {
		return r
	}
	return &bounded{r: r, left: k.MaxBytes, path: path, k: k}
}

type bounded struct {
	r    io.Reader
	left int64
	path string
	k    Kind
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, &BoundError{Path: b.path, Kind: b.k}
	}
	// One byte past the bound is asked for, to tell a file of exactly the
	// bound from a longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), &BoundError{Path: b.path, Kind: b.k}
	}
	return n, err
}
