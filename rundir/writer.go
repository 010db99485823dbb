package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/scrape"
)

// Writer owns a run directory while the run goes on: each record and scrape
// row is appended to its JSONL file as it arrives (Record, Row), so a crash
// loses nothing already finished, and whole files (run.json, scenario.yaml)
// are written atomically (WriteFile, WriteJSON). It is the run's sink for
// the raw files: Record and Row are called on the run's one consumer
// goroutine and take no lock.
type Writer struct {
	dir string

	requests *os.File
	scrapes  *os.File
	// rec and line are reused for every record: the encoder takes rec's
	// address, and a record's line costs no allocation of its own
	// (Record.AppendJSON), which at hundreds of records a second is garbage
	// the quiet collector (0004) would otherwise have to hold.
	rec  client.Record
	line []byte
	// torn marks a file whose last write failed part-way (a full disk):
	// the next line starts on a new line, so it is not glued to the torn one.
	torn map[*os.File]bool
	// broken is closed at the first write that failed (a full disk): the
	// run stops rather than carry on measuring what it cannot keep.
	broken     chan struct{}
	brokenOnce sync.Once
}

// New creates a new run directory named dir — or dir-2, dir-3, ... when
// that exists already, so two runs never mix — and opens its raw files.
func New(dir string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("create runs directory: %w", err)
	}
	base := dir
	for n := 2; ; n++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || n > 1000 {
			return nil, fmt.Errorf("create run directory: %w", err)
		}
		dir = fmt.Sprintf("%s-%d", base, n)
	}
	w := &Writer{dir: dir, broken: make(chan struct{})}
	var err error
	if w.requests, err = os.Create(filepath.Join(dir, RequestsFile)); err != nil {
		return nil, err
	}
	if w.scrapes, err = os.Create(filepath.Join(dir, ScrapesFile)); err != nil {
		w.requests.Close()
		return nil, err
	}
	return w, nil
}

// Dir is the run directory.
func (w *Writer) Dir() string { return w.dir }

// String names the writer where a failed sink is reported.
func (w *Writer) String() string { return "the run directory " + w.dir }

// Broken is closed when a write of the raw files failed (a full disk): what
// is measured from then on could not be kept, so the run should stop.
func (w *Writer) Broken() <-chan struct{} { return w.broken }

// Record appends one finished request to requests.jsonl, redacted (an error
// may echo an API key or a URL).
func (w *Writer) Record(rec client.Record) error {
	w.rec = rec
	RedactRecord(&w.rec)
	w.line = w.startLine(w.requests)
	w.line = w.rec.AppendJSON(w.line) // no reflection, no copy
	w.rec.Chunks = nil                // the caller's array: not ours to keep
	return w.keep(w.writeLine(w.requests))
}

// Row appends one scrape attempt to scrapes.jsonl, redacted (a target's URL
// may carry a password or a token).
func (w *Writer) Row(row scrape.Row) error {
	RedactRow(&row)
	w.line = w.startLine(w.scrapes)
	b, err := json.Marshal(&row)
	if err != nil {
		return w.keep(fmt.Errorf("encode %s line: %w", ScrapesFile, err))
	}
	w.line = append(w.line, b...)
	return w.keep(w.writeLine(w.scrapes))
}

// keep breaks the writer at the first error.
func (w *Writer) keep(err error) error {
	if err != nil {
		w.brokenOnce.Do(func() { close(w.broken) })
	}
	return err
}

// startLine empties the line buffer, starting a new line after a torn one.
func (w *Writer) startLine(f *os.File) []byte {
	w.line = w.line[:0]
	if w.torn[f] {
		w.line = append(w.line, '\n')
	}
	return w.line
}

// writeLine ends the buffered line and writes it with a single write call,
// so the file only ever holds whole lines plus, after a crash, at most one
// partial last line.
func (w *Writer) writeLine(f *os.File) error {
	w.line = append(w.line, '\n')
	if n, err := f.Write(w.line); err != nil {
		if n > 0 {
			if w.torn == nil {
				w.torn = map[*os.File]bool{}
			}
			w.torn[f] = true
		}
		return fmt.Errorf("append to %s: %w", f.Name(), err)
	}
	delete(w.torn, f)
	return nil
}

// WriteFile writes a whole file into the run directory (scenario.yaml,
// run.json, ...) atomically: a reader never sees half a file.
func (w *Writer) WriteFile(name string, data []byte) error {
	return WriteFile(filepath.Join(w.dir, name), data)
}

// WriteJSON writes v as indented JSON into the run directory. A RunMeta
// (or *RunMeta) is written redacted (RedactMeta): its URLs and notes may
// carry secrets expanded from the environment.
func (w *Writer) WriteJSON(name string, v any) error {
	return WriteJSON(filepath.Join(w.dir, name), v)
}

// WriteJSON writes v as indented JSON to path atomically, a RunMeta
// redacted (Writer.WriteJSON).
func WriteJSON(path string, v any) error {
	switch m := v.(type) {
	case RunMeta:
		RedactMeta(&m)
		v = m
	case *RunMeta:
		c := *m
		RedactMeta(&c)
		v = &c
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return WriteFile(path, append(b, '\n'))
}

// Close syncs and closes the raw files.
func (w *Writer) Close() error {
	var firstErr error
	for _, f := range []*os.File{w.requests, w.scrapes} {
		if err := f.Sync(); err != nil && firstErr == nil {
			firstErr = err
		}
		if err := f.Close(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}
