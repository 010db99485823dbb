package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TrialsFile is the index of a trial set: one directory holding the run
// directories of one scenario run several times over (llmbench run
// --repeat N), so that a decision can weigh how much identical runs differ.
// Each trial is a complete run directory of its own, readable by every
// command that reads one.
const TrialsFile = "trials.json"

// TrialSet is the content of TrialsFile.
type TrialSet struct {
	// Trials are the trials' directories relative to the set, in the order
	// they ran.
	Trials []string `json:"trials"`
}

// WriteTrials records the trial set in dir: trials are the trials'
// directory names relative to dir, in the order they ran.
func WriteTrials(dir string, trials []string) error {
	for _, t := range trials {
		if !local(t) {
			return fmt.Errorf("trial set %s: trial %q is not a directory inside it", dir, t)
		}
	}
	b, err := json.MarshalIndent(TrialSet{Trials: trials}, "", "  ")
	if err != nil {
		return err
	}
	return WriteFile(filepath.Join(dir, TrialsFile), append(b, '\n'))
}

// Trials are the run directories path stands for: the trials of a trial
// set in the order they ran, or path itself when it is a single run
// directory (or a summary.json, which a caller reads as one run).
func Trials(path string) ([]string, error) {
	b, err := ReadFile(filepath.Join(path, TrialsFile))
	if errors.Is(err, os.ErrNotExist) {
		return []string{path}, nil
	}
	if err != nil {
		return nil, err
	}
	var set TrialSet
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(path, TrialsFile), err)
	}
	if len(set.Trials) == 0 {
		return nil, fmt.Errorf("%s: the trial set lists no trials", filepath.Join(path, TrialsFile))
	}
	out := make([]string, 0, len(set.Trials))
	for _, t := range set.Trials {
		// A trial outside the set would let a copied trials.json point a
		// gate at another run's files.
		if !local(t) {
			return nil, fmt.Errorf("%s: trial %q is not a directory inside the set", filepath.Join(path, TrialsFile), t)
		}
		dir := filepath.Join(path, t)
		if !isRunDir(dir) {
			return nil, fmt.Errorf("%s: trial %q is not a run directory (no %s)", filepath.Join(path, TrialsFile), t, RunFile)
		}
		out = append(out, dir)
	}
	return out, nil
}

func local(name string) bool {
	return name != "" && filepath.IsLocal(name) && !strings.ContainsAny(name, `\`)
}
