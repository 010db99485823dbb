package scenarios

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"

	"github.com/llmbench-org/llmbench/internal/inputfile"
)

// source is where a scenario file came from, so the data files it names
// (traces, datasets, histograms) are found relative to it.
type source struct {
	fsys fs.FS  // nil: the local disk
	dir  string // the scenario file's directory: absolute on disk, slash-separated in fsys
	// engine holds the built-in engine's settings as the file gave them,
	// for ResolveEngine.
	engine *engineOverrides
}

// join resolves a data file's name against the scenario's directory.
func (src source) join(name string) string {
	if src.fsys != nil {
		if path.IsAbs(name) {
			return path.Clean(name[1:])
		}
		return path.Join(src.dir, name)
	}
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(src.dir, name)
}

// check reports whether a data file can be read, for validation.
func (src source) check(name string) error {
	var err error
	if src.fsys != nil {
		_, err = fs.Stat(src.fsys, src.join(name))
	} else {
		// Only a regular file is opened, and without blocking: opening a
		// named pipe blocks until a writer comes, and validation must never
		// hang.
		err = inputfile.Check(src.join(name), inputfile.Data)
	}
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", name, err)
	}
	return nil
}

// absolutize rewrites the data file paths of a scenario read from disk as
// absolute paths, so that its resolved copy in a run directory still finds them.
func (s *Scenario) absolutize() {
	if s.src.fsys != nil {
		return
	}
	abs := func(p *string) {
		if *p != "" {
			*p = s.src.join(*p)
		}
	}
	w := &s.Workload
	if w.Trace != nil {
		abs(&w.Trace.Path)
	}
	abs(&w.Dataset.Path)
	if l := s.Engine.Launch; l != nil {
		abs(&l.Dir)
	}
	abs(&w.Prompt.File)
	abs(&w.Output.File)
}
