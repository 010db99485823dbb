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
	if _, err := os.Stat(filepath.Join(path, report.RunFile)); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(path, report.SummaryFile)); err == nil {
			return loadSummary(filepath.Join(path, report.SummaryFile))
		}
		return Run{}, fmt.Errorf("load run: %s holds neither %s nor %s", path, report.RunFile, report.SummaryFile)
	}
	s, err := report.Build(path)
	if err != nil {
		return Run{}, fmt.Errorf("load run %s: %w", path, err)
	}
	records, err := measuredRecords(path)
	if err != nil {
		return Run{}, fmt.Errorf("load run %s: %w", path, err)
	}
	return Run{ID: s.Run.ID, Summary: s, Records: records}, nil
}

func loadSummary(path string) (Run, error) {
	b, err := os.ReadFile(path)
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

// measuredRecords are the records the summary's client view counts: those of
// the measured phases (all of them when the run has no phase bookkeeping),
// in plan order.
func measuredRecords(dir string) ([]client.Record, error) {
	var meta report.RunMeta
	b, err := os.ReadFile(filepath.Join(dir, report.RunFile))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return nil, fmt.Errorf("%s: %w", report.RunFile, err)
	}
	measured := map[string]bool{}
	for _, ph := range meta.Phases {
		if ph.Measured {
			measured[ph.Name] = true
		}
	}
	records := []client.Record{}
	_, err = report.ReadJSONL(filepath.Join(dir, report.RequestsFile), func(r *client.Record) error {
		if len(measured) == 0 || measured[r.Phase] {
			records = append(records, *r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(records, func(a, b client.Record) int { return a.Index - b.Index })
	return records, nil
}
