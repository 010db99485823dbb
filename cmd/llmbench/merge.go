package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/llmbench-org/llmbench/run"
	"github.com/llmbench-org/llmbench/rundir"
)

func newMergeCmd(cio *cliIO) *cobra.Command {
	return &cobra.Command{
		Use:   "merge OUT_DIR SHARD_RUN_DIR...",
		Short: "Merge the runs of the shards of one run (run --shard i/n) into one run directory and summarise it",
		Long: `Merge the run directories of the n shards of one run (llmbench run --shard i/n,
started together with --start-at) into OUT_DIR, as if one generator had sent
every request, and summarise it. Each SHARD_RUN_DIR is a shard's run
directory, or a directory holding them up to two levels down (the volume
every shard of a Kubernetes Job wrote into). An engine every shard scraped
counts once; distinct engines (each shard's own) add up.`,
		Example: `  llmbench merge merged/ runs-0/20261202T100000Z-chat-shard0of2 runs-1/20261202T100000Z-chat-shard1of2
  llmbench merge /results/bench-1/merged /results/bench-1`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := args[0]
			if err := refuseTrials(args[1:], out); err != nil {
				return asUsage(err)
			}
			if err := rundir.Merge(out, args[1:]); err != nil {
				return asUsage(err)
			}
			if _, err := run.Finalize(out, cio.stdout); err != nil {
				return err
			}
			_, err := fmt.Fprintf(cio.stdout, "run directory: %s\n", out)
			return err
		},
	}
}

// refuseTrials refuses trials as shards: the trials of a trial set (run
// --repeat) are the same run made again, each with every request of the
// plan, and merged they would read as one run of N times the load.
func refuseTrials(paths []string, out string) error {
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(p, rundir.TrialsFile)); err == nil {
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

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
