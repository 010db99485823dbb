package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/llmbench-org/llmbench/scrape"
)

// GPUFile holds the GPU telemetry's scrapes (scenario scrape.gpu), one
// scrape.Row per line, apart from the engine's scrapes.jsonl: every reader
// of the engine's rows (settling, outages, dialect changes, gauges) stays
// the engine's (docs/decisions/1700).
const GPUFile = "gpu.jsonl"

// PhaseCache is the prefix cache a phase started with: its mode (cold or
// warm) and, for cold, how the reset went.
type PhaseCache struct {
	Mode string `json:"mode"` // cold | warm
	// Default says the scenario named no cache: warm by default.
	Default bool `json:"default,omitempty"`
	// Reset is the reset's outcome for cold: "ok", or why not (the engine
	// offers none, refused it, or could not be reached); "" for warm.
	Reset string `json:"reset,omitempty"`
	API   string `json:"api,omitempty"` // the engine's reset endpoint used
	Calls int    `json:"calls,omitempty"`
}

// GPUWriter appends GPU telemetry rows to gpu.jsonl as they come, one
// write per line; it is used from one goroutine.
type GPUWriter struct {
	f    *os.File
	line []byte
}

// CreateGPU creates dir's gpu.jsonl.
func CreateGPU(dir string) (*GPUWriter, error) {
	f, err := os.Create(filepath.Join(dir, GPUFile))
	if err != nil {
		return nil, err
	}
	return &GPUWriter{f: f}, nil
}

// Row appends one row, redacted (an exporter's URL may carry a token).
func (w *GPUWriter) Row(row scrape.Row) error {
	RedactRow(&row)
	b, err := json.Marshal(&row)
	if err != nil {
		return fmt.Errorf("encode %s line: %w", GPUFile, err)
	}
	w.line = append(append(w.line[:0], b...), '\n')
	if _, err := w.f.Write(w.line); err != nil {
		return fmt.Errorf("append to %s: %w", w.f.Name(), err)
	}
	return nil
}

// Close closes the file.
func (w *GPUWriter) Close() error { return w.f.Close() }

// ReadGPURows reads a run directory's gpu.jsonl, redacted, and how many
// torn lines it skipped; a run without GPU telemetry has none.
func ReadGPURows(dir string) (rows []scrape.Row, partial int, err error) {
	partial, err = ReadJSONL(filepath.Join(dir, GPUFile), func(r *scrape.Row) error {
		RedactRow(r)
		rows = append(rows, *r)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, partial, err
	}
	return rows, partial, nil
}
