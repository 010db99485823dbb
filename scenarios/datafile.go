package scenarios

import (
	"fmt"
	"io"

	"github.com/llmbench-org/llmbench/internal/inputfile"
)

// Open opens a data file the scenario names (Trace.Path, Dataset.Path,
// Length.File) to be read as a stream, within the bounds on a data file
// (inputfile.Data): not a regular file, or over the size bound, is refused
// before a byte is read, and reading stops at the size bound. On disk those
// paths were made absolute when the scenario was loaded; for an embedded
// example they are relative to it.
func (s Scenario) Open(name string) (io.ReadCloser, error) {
	f, err := s.src.open(name)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	return f, nil
}

func (src source) open(name string) (io.ReadCloser, error) {
	if src.fsys == nil {
		return inputfile.Open(src.join(name), inputfile.Data)
	}
	f, err := src.fsys.Open(src.join(name))
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{inputfile.Bound(f, name, inputfile.Data), f}, nil
}
