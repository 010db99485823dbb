package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/llmbench-org/llmbench/internal/inputfile"
	"github.com/llmbench-org/llmbench/scrape"
	"github.com/llmbench-org/llmbench/scrape/trace"
)

// ReadFile reads a whole file of a run directory (or a summary.json kept
// alone, a trial set's trials.json, a noise file): a regular file, at most
// inputfile.RunFileBytes of it — a larger one is an error, not an
// allocation of whatever size a damaged or hostile file claims.
func ReadFile(path string) ([]byte, error) {
	return inputfile.ReadAll(path, inputfile.RunFile)
}

// ReadMeta reads a run directory's run.json.
func ReadMeta(dir string) (RunMeta, error) {
	var m RunMeta
	path := filepath.Join(dir, RunFile)
	b, err := ReadFile(path)
	if err != nil {
		return m, fmt.Errorf("read run: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ReadRows reads a run directory's scrapes.jsonl, every row redacted
// (RedactRow), and how many torn lines it skipped; a run without one (no
// /metrics) has no rows.
func ReadRows(dir string) (rows []scrape.Row, partial int, err error) {
	partial, err = ReadJSONL(filepath.Join(dir, ScrapesFile), func(r *scrape.Row) error {
		RedactRow(r)
		rows = append(rows, *r)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, partial, err
	}
	return rows, partial, nil
}

// ReadTraceLog reads the engine's trace log when the run has one.
func ReadTraceLog(dir string) ([]trace.Event, error) {
	path := filepath.Join(dir, TraceLogFile)
	f, err := inputfile.Open(path, inputfile.TraceLog)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read trace log: %w", err)
	}
	defer f.Close()
	log, err := trace.Read(f, path)
	if err != nil {
		return nil, err
	}
	return log.Events, nil
}
