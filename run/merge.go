package run

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/llmbench-org/llmbench/rundir"
)

// Merge merges the run directories of the shards of one run (run --shard
// i/n; each path a shard's run directory or a directory holding them) into
// out, finalizes it as one run, prints its text summary and its directory
// on w: `llmbench merge`. Shards that do not form one run, or the trials
// of a trial set given as shards, are the user's to fix (*ConfigError).
func Merge(out string, shards []string, w io.Writer) error {
	if err := refuseTrials(shards, out); err != nil {
		return configError(err)
	}
	if err := rundir.Merge(out, shards); err != nil {
		return configError(err)
	}
	_, err := Finalize(out, w) // its text ends with the run directory
	return err
}

// refuseTrials refuses trials as shards: the trials of a trial set (run
// --repeat) are the same run made again, each with every request of the
// plan, and merged they would read as one run of N times the load.
func refuseTrials(paths []string, out string) error {
	for _, p := range paths {
		if fileExists(filepath.Join(p, rundir.TrialsFile)) {
			return trialsNotShards(p)
		}
	}
	runs, err := rundir.ShardRuns(paths, out)
	if err != nil {
		return nil // rundir.Merge says what is wrong with them
	}
	for _, r := range runs {
		if set := filepath.Dir(r); fileExists(filepath.Join(set, rundir.TrialsFile)) {
			return trialsNotShards(set)
		}
	}
	return nil
}

func trialsNotShards(set string) error {
	trials, err := rundir.Trials(set)
	if err != nil {
		return fmt.Errorf("%s is a trial set (llmbench run --repeat), not the shards of one run: %w", set, err)
	}
	return fmt.Errorf("%s is a trial set (llmbench run --repeat) of %d trials (%s), not the shards of one run: each trial sent the whole plan, so merged they would read as one run of %d times the load; report, gate or compare the set instead",
		set, len(trials), trialNames(trials), len(trials))
}
