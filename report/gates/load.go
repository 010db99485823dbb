package gates

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/llmbench-org/llmbench/client"
	"github.com/llmbench-org/llmbench/report"
	"github.com/llmbench-org/llmbench/rundir"
)

// LoadRun reads a run for the gates. path is either a run directory with its
// raw files (the summary is rebuilt with report.Build, and the measured
// phases' records are kept for confidence intervals), or a summary.json (or
// a directory holding only one, as CI artifacts often do): then the run has
// no records and regression gates compare point estimates.
func LoadRun(path string) (Run, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Run{}, fmt.Errorf("load run: %w", err)
	}
	if !info.IsDir() {
		return loadSummary(path)
	}
	if _, err := os.Stat(filepath.Join(path, rundir.RunFile)); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(path, rundir.SummaryFile)); err == nil {
			return loadSummary(filepath.Join(path, rundir.SummaryFile))
		}
		return Run{}, fmt.Errorf("load run: %s holds neither %s nor %s", path, rundir.RunFile, rundir.SummaryFile)
	}
	l, err := report.Load(path)
	if err != nil {
		return Run{}, fmt.Errorf("load run %s: %w", path, err)
	}
	return NewRunLoaded(l.Summary(), l), nil
}

// NewRunLoaded is NewRun for a run directory read once (report.Load):
// its records, without their chunks, and the digest of their chunks.
func NewRunLoaded(s report.Summary, l *report.Loaded) Run {
	run := NewRun(s, l.Requests.Records)
	measured := map[string]bool{}
	for _, ph := range s.Phases {
		if ph.Measured {
			measured[ph.Name] = true
		}
	}
	run.Digest = l.Requests.Digest.Only(func(phase string) bool { return len(measured) == 0 || measured[phase] })
	return run
}

func byIndex(a, b client.Record) int { return a.Index - b.Index }

func loadSummary(path string) (Run, error) {
	b, err := rundir.ReadFile(path)
	if err != nil {
		return Run{}, fmt.Errorf("load run: %w", err)
	}
	var s report.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return Run{}, fmt.Errorf("load run: %s: %w", path, err)
	}
	if s.Schema != report.SummarySchema {
		return Run{}, fmt.Errorf("load run: %s: schema %q, want %q", path, s.Schema, report.SummarySchema)
	}
	return Run{ID: s.Run.ID, Summary: s}, nil
}

// NewRun is a run from its summary and its records (all phases, any order):
// the records kept are those the summary's client view counts, those of the
// measured phases, in plan order.
func NewRun(s report.Summary, records []client.Record) Run {
	measured := map[string]bool{}
	for _, ph := range s.Phases {
		if ph.Measured {
			measured[ph.Name] = true
		}
	}
	n := 0
	for _, r := range records {
		if len(measured) == 0 || measured[r.Phase] {
			n++
		}
	}
	if n == len(records) && slices.IsSortedFunc(records, byIndex) {
		// Every record kept, already in order: no copy (a large run's
		// records are most of a report's memory).
		return Run{ID: s.Run.ID, Summary: s, Records: records}
	}
	kept := make([]client.Record, 0, n)
	for _, r := range records {
		if len(measured) == 0 || measured[r.Phase] {
			kept = append(kept, r)
		}
	}
	slices.SortStableFunc(kept, byIndex)
	return Run{ID: s.Run.ID, Summary: s, Records: kept}
}

// LoadSide reads the runs a path stands for, for one side of a comparison:
// the trials of a trial set (rundir.TrialsFile), a single run directory or
// summary.json, or a directory of run directories (a baseline history; its
// runs in name order, which for llmbench's directories is start order).
func LoadSide(path string) (Side, error) {
	dirs, err := SidePaths(path)
	if err != nil {
		return nil, err
	}
	side := make(Side, 0, len(dirs))
	for _, d := range dirs {
		r, err := LoadRun(d)
		if err != nil {
			return nil, err
		}
		side = append(side, r)
	}
	return side, nil
}

// SidePaths are the runs' paths LoadSide reads for path.
func SidePaths(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("load run: %w", err)
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	dirs, err := rundir.Trials(path)
	if err != nil {
		return nil, fmt.Errorf("load run: %w", err)
	}
	if len(dirs) == 1 && dirs[0] == path && !isRun(path) {
		if dirs = runsUnder(path); len(dirs) == 0 {
			return nil, fmt.Errorf("load run: %s holds no %s, %s or %s, and no run directories", path, rundir.RunFile, rundir.SummaryFile, rundir.TrialsFile)
		}
	}
	return dirs, nil
}

func isRun(dir string) bool {
	for _, f := range []string{rundir.RunFile, rundir.SummaryFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// runsUnder are the run directories directly inside dir, by name.
func runsUnder(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if d := filepath.Join(dir, e.Name()); e.IsDir() && isRun(d) {
			out = append(out, d)
		}
	}
	return out
}
